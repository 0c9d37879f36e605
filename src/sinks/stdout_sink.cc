// stdout: the reference's output. One line per chunk: a JSON list in Python's json.dumps form; LOG records with
// null fields removed, METRIC records flattened ("a.b" keys). Streams: nothing is held beyond the output buffer.
#include "core/json.h"
#include "core/stdout_lines.h"
#include "sinks/fd_writer.h"
#include "sinks/sink.h"

namespace gcm {
namespace {

class StdoutSink : public Sink {
 public:
  ~StdoutSink() override {
    try {
      out_.flush();  // what an abandoned chunk had encoded goes before the log lines it held
    } catch (...) {
    }
    close_line();
  }
  void begin_chunk(const BatchInfo& info) override {
    close_line();  // a chunk whose write failed never reached end_chunk
    stdout_lines::open_line();
    line_open_ = true;
    metric_ = info.data_type == DataType::Metric;
    first_ = true;
    out_.buffer().push_back('[');
  }
  void write(const Record& r) override {
    std::string& buf = out_.buffer();
    if (!first_) buf.append(", ");
    first_ = false;
    JsonWriter w(buf, JsonStyle::Python);
    if (metric_)
      w.flat_record(r);
    else
      w.record(r, /*drop_nulls=*/true);
    out_.maybe_flush();
  }
  void end_chunk() override {
    out_.buffer().append("]\n");
    try {
      out_.flush();
    } catch (...) {
      close_line();
      throw;
    }
    close_line();
  }
  void flush() override { out_.flush(); }

 private:
  // The log lines held while the line was open come out after it.
  void close_line() {
    if (!line_open_) return;
    line_open_ = false;
    stdout_lines::close_line();
  }

  FdWriter out_{1};
  bool line_open_ = false;
  bool metric_ = false;
  bool first_ = true;
};

const bool kStdoutSinkRegistered = register_sink({
    "stdout",
    "Prints each chunk as one line: a JSON list of records (the reference's stdout form).",
    {},
    [](const SinkOptions&, const SinkContext&) { return std::make_unique<StdoutSink>(); },
});

}  // namespace
}  // namespace gcm
