// file: JSON lines of the flat record (one compact JSON object per line, null fields omitted), routed by the
// record's identifier: JOB -> job_file_path, NODE -> node_file_path, everything else -> file_path. Size-based
// rotation; several processes may append to the same file.
#include <memory>

#include <fmt/format.h>

#include "core/json.h"
#include "sinks/rotating_file.h"
#include "sinks/sink.h"

namespace gcm {
namespace {

class FileSink : public Sink {
 public:
  FileSink(const SinkOptions& o) {
    int64_t max_bytes_opt = o.get_int("max_bytes", 1 << 20);
    int64_t backups_opt = o.get_int("backup_count", 2);
    if (max_bytes_opt < 0 || backups_opt < 0)
      throw SinkUsageError("sink 'file': max_bytes and backup_count must not be negative");
    auto max_bytes = static_cast<uint64_t>(max_bytes_opt);
    auto backups = static_cast<int>(backups_opt);
    if (o.has("file_path")) generic_ = std::make_unique<RotatingFile>(o.get_string("file_path"), max_bytes, backups);
    if (o.has("job_file_path")) job_ = std::make_unique<RotatingFile>(o.get_string("job_file_path"), max_bytes, backups);
    if (o.has("node_file_path"))
      node_ = std::make_unique<RotatingFile>(o.get_string("node_file_path"), max_bytes, backups);
    if (!generic_ && !job_ && !node_)
      throw SinkUsageError(
          "When using the file sink at least one of file_path, job_file_path, node_file_path needs to be "
          "specified, e.g. -o file_path=/var/log/gcm/data.jsonl");
  }

  void begin_chunk(const BatchInfo& info) override {
    target_ = generic_.get();
    if (info.identifier == DataIdentifier::Job && job_) target_ = job_.get();
    if (info.identifier == DataIdentifier::Node && node_) target_ = node_.get();
    if (!target_) {
      throw SinkError(fmt::format("file sink: no path configured for {} records (set {} or file_path)",
                                  to_string(info.identifier),
                                  info.identifier == DataIdentifier::Job ? "job_file_path" : "node_file_path"));
    }
    buf_.clear();
  }

  void write(const Record& r) override {
    JsonWriter(buf_, JsonStyle::Compact).record(r, /*drop_nulls=*/true);
    buf_.push_back('\n');
    if (buf_.size() >= (1u << 16)) drain();
  }

  void end_chunk() override { drain(); }

 private:
  void drain() {
    if (!buf_.empty() && target_) target_->append_lines(buf_);
    buf_.clear();
  }

  std::unique_ptr<RotatingFile> generic_, job_, node_;
  RotatingFile* target_ = nullptr;
  std::string buf_;
};

const bool registered = register_sink({
    "file",
    "Appends JSON lines (one record per line) to files chosen by record kind, with rotation.",
    {
        {"file_path", "path", "destination of records without a JOB/NODE identifier (and the fallback)", ""},
        {"job_file_path", "path", "destination of job records (slurm_job_monitor)", ""},
        {"node_file_path", "path", "destination of node records (slurm_job_monitor)", ""},
        {"max_bytes", "int", "rotate a file before it would pass this size; 0 never rotates", "1048576"},
        {"backup_count", "int", "rotated files kept (path.1 ... path.N)", "2"},
    },
    [](const SinkOptions& o, const SinkContext&) { return std::make_unique<FileSink>(o); },
});

}  // namespace
}  // namespace gcm
