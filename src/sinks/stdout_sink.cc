// stdout: the reference's output. One line per chunk: a JSON list in Python's json.dumps form; LOG records with
// null fields removed, METRIC records flattened ("a.b" keys). Streams: nothing is held beyond the output buffer.
#include "core/json.h"
#include "sinks/fd_writer.h"
#include "sinks/sink.h"

namespace gcm {
namespace {

class StdoutSink : public Sink {
 public:
  void begin_chunk(const BatchInfo& info) override {
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
    out_.flush();
  }
  void flush() override { out_.flush(); }

 private:
  FdWriter out_{1};
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
