// telemetry: appends every record to one local file for offline analysis (GCM's telemetry exporter). format=json:
// NDJSON, one record per line with every field, nulls included, in Python's json.dumps form (GCM wrote
// json.dumps(asdict(record))). format=csv: one row per record, the schema's fields as columns in their order, the
// header once per file (not repeated when the file already has rows: appended runs stay one table), nested values
// as compact JSON cells (GCM wrote Python's repr of them). Records of another type go under the same header when
// it has their columns, else into a new file with the union of the columns (sinks/csv_table.h).
#include <memory>

#include <fmt/format.h>

#include "core/json.h"
#include "sinks/csv_table.h"
#include "sinks/rotating_file.h"
#include "sinks/sink.h"

namespace gcm {
namespace {

class TelemetrySink : public Sink {
 public:
  TelemetrySink(const SinkOptions& o, const SinkContext& ctx) {
    std::string path = o.get_string("file_path");
    if (path.empty()) throw SinkUsageError("sink 'telemetry' needs -o file_path=PATH (the file records go to)");
    std::string format = o.get_string("format", "json");
    if (format != "json" && format != "csv")
      throw SinkUsageError(fmt::format("sink 'telemetry': Unsupported format '{}'. Choose from: json, csv", format));
    int64_t max_bytes = o.get_int("max_bytes", 0);
    int64_t backups = o.get_int("backup_count", 2);
    if (max_bytes < 0 || backups < 0)
      throw SinkUsageError("sink 'telemetry': max_bytes and backup_count must not be negative");
    if (format == "csv")
      csv_ = std::make_unique<CsvFile>(path, static_cast<uint64_t>(max_bytes), static_cast<int>(backups),
                                       CsvColumnOrder::Appended, ctx.log);
    else
      json_ = std::make_unique<RotatingFile>(path, static_cast<uint64_t>(max_bytes), static_cast<int>(backups));
  }

  void begin_chunk(const BatchInfo& info) override {
    schema_ = info.schema;
    buf_.clear();
    rows_.clear();
  }

  void write(const Record& r) override {
    if (json_) {
      JsonWriter(buf_, JsonStyle::Python).record(r, /*drop_nulls=*/false);
      buf_.push_back('\n');
      if (buf_.size() >= (1u << 16)) drain();
      return;
    }
    if (!schema_) schema_ = r.schema;
    auto& row = rows_.emplace_back();
    row.reserve(r.values.size());
    for (const auto& v : r.values) row.push_back(csv_cell(v));
  }

  void end_chunk() override {
    if (json_) {
      drain();
      return;
    }
    if (rows_.empty() || !schema_) return;
    std::vector<std::string> columns;
    for (const auto& f : schema_->fields) columns.push_back(f.name);
    csv_->append(columns, rows_);
    rows_.clear();
  }

 private:
  void drain() {
    if (!buf_.empty()) json_->append_lines(buf_);
    buf_.clear();
  }

  std::unique_ptr<RotatingFile> json_;
  std::unique_ptr<CsvFile> csv_;
  const Schema* schema_ = nullptr;
  std::string buf_;
  std::vector<std::vector<std::string>> rows_;
};

const bool kTelemetrySinkRegistered = register_sink({
    "telemetry",
    "Appends every record to one local file for offline analysis: NDJSON (all fields) or CSV (header once per file).",
    {
        {"file_path", "path", "the file records are appended to; its directory is created (required)", ""},
        {"format", "str", "json (one record per line) or csv (the schema's fields as columns)", "json"},
        {"max_bytes", "int", "rotate the file before it would pass this size; 0 never rotates", "0"},
        {"backup_count", "int",
         "rotated files kept (path.1 ... path.N); a CSV file also rotates when records bring new columns", "2"},
    },
    [](const SinkOptions& o, const SinkContext& ctx) { return std::make_unique<TelemetrySink>(o, ctx); },
});

}  // namespace
}  // namespace gcm
