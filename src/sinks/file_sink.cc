// file: records appended to files chosen by the record's identifier: JOB -> job_file_path, NODE -> node_file_path,
// everything else -> file_path. format=json (the default): JSON lines of the flat record (one compact object per
// line, null fields omitted). format=csv (GCM's newer option): each record flattened as for the stdout METRIC form
// (nested objects "a.b", lists "a.0"), one CSV table per file whose header is the sorted key union of the batch
// (sinks/csv_table.h says how a file keeps one header). Size-based rotation; several processes may append to the
// same file.
#include <map>
#include <memory>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "core/flatten.h"
#include "core/json.h"
#include "sinks/csv_table.h"
#include "sinks/rotating_file.h"
#include "sinks/sink.h"

namespace gcm {
namespace {

// One destination: a JSON-lines file or a CSV table, as -o format says.
struct Target {
  std::unique_ptr<RotatingFile> json;
  std::unique_ptr<CsvFile> csv;
};

class FileSink : public Sink {
 public:
  FileSink(const SinkOptions& o, const SinkContext& ctx) : log_(ctx.log) {
    int64_t max_bytes_opt = o.get_int("max_bytes", 1 << 20);
    int64_t backups_opt = o.get_int("backup_count", 2);
    if (max_bytes_opt < 0 || backups_opt < 0)
      throw SinkUsageError("sink 'file': max_bytes and backup_count must not be negative");
    std::string format = o.get_string("format", "json");
    if (format != "json" && format != "csv")
      throw SinkUsageError(fmt::format("sink 'file': format '{}' is not one of json, csv", format));
    csv_ = format == "csv";
    auto max_bytes = static_cast<uint64_t>(max_bytes_opt);
    auto backups = static_cast<int>(backups_opt);
    auto open = [&](const char* option) {
      auto t = std::make_unique<Target>();
      std::string path = o.get_string(option);
      if (csv_)
        t->csv = std::make_unique<CsvFile>(path, max_bytes, backups, CsvColumnOrder::Sorted, log_);
      else
        t->json = std::make_unique<RotatingFile>(path, max_bytes, backups);
      return t;
    };
    if (o.has("file_path")) generic_ = open("file_path");
    if (o.has("job_file_path")) job_ = open("job_file_path");
    if (o.has("node_file_path")) node_ = open("node_file_path");
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
    flat_.clear();
    schema_ = info.schema;
  }

  void write(const Record& r) override {
    if (csv_) {
      auto& cells = flat_.emplace_back();
      flatten_record(r, [&](std::string_view key, const Value& v) { cells.emplace_back(key, csv_cell(v)); });
      return;
    }
    JsonWriter(buf_, JsonStyle::Compact).record(r, /*drop_nulls=*/true);
    buf_.push_back('\n');
    if (buf_.size() >= (1u << 16)) drain();
  }

  void end_chunk() override {
    if (csv_)
      write_csv();
    else
      drain();
  }

 private:
  void drain() {
    if (!buf_.empty() && target_) target_->json->append_lines(buf_);
    buf_.clear();
  }

  // The batch's columns: every flattened key seen, plus the schema's scalar fields even where the whole batch has
  // them null (GCM dropped those, so its header changed with the data: a file's header then fits more batches).
  void write_csv() {
    if (flat_.empty() || !target_) return;
    std::set<std::string> keys;
    for (const auto& cells : flat_)
      for (const auto& [k, v] : cells) keys.insert(k);
    if (schema_)
      for (const auto& f : schema_->fields)
        if (f.type != FieldType::Object && f.type != FieldType::List) keys.insert(f.name);
    std::vector<std::string> columns(keys.begin(), keys.end());
    std::unordered_map<std::string, size_t> index;
    for (size_t i = 0; i < columns.size(); ++i) index.emplace(columns[i], i);
    std::vector<std::vector<std::string>> rows;
    rows.reserve(flat_.size());
    for (auto& cells : flat_) {
      auto& row = rows.emplace_back(columns.size());
      for (auto& [k, v] : cells) row[index[k]] = std::move(v);
    }
    flat_.clear();
    target_->csv->append(columns, rows);
  }

  std::shared_ptr<spdlog::logger> log_;
  bool csv_ = false;
  std::unique_ptr<Target> generic_, job_, node_;
  Target* target_ = nullptr;
  const Schema* schema_ = nullptr;
  std::string buf_;
  std::vector<std::vector<std::pair<std::string, std::string>>> flat_;  // the chunk's records (csv)
};

const bool kFileSinkRegistered = register_sink({
    "file",
    "Appends records to files chosen by record kind, as JSON lines or CSV, with rotation.",
    {
        {"file_path", "path", "destination of records without a JOB/NODE identifier (and the fallback)", ""},
        {"job_file_path", "path", "destination of job records (slurm_job_monitor)", ""},
        {"node_file_path", "path", "destination of node records (slurm_job_monitor)", ""},
        {"format", "str",
         "json: one record per line; csv: flattened records (a.b, a.0), header = sorted column union, once per file",
         "json"},
        {"max_bytes", "int", "rotate a file before it would pass this size; 0 never rotates", "1048576"},
        {"backup_count", "int", "rotated files kept (path.1 ... path.N)", "2"},
    },
    [](const SinkOptions& o, const SinkContext& ctx) { return std::make_unique<FileSink>(o, ctx); },
});

}  // namespace
}  // namespace gcm
