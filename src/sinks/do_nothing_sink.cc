// do_nothing: discards every record (the default sink of health checks, and the baseline of benchmarks).
#include "sinks/sink.h"

namespace gcm {
namespace {

class DoNothingSink : public Sink {
 public:
  void write(const Record&) override {}
};

const bool kDoNothingSinkRegistered = register_sink({
    "do_nothing",
    "Discards every record.",
    {},
    [](const SinkOptions&, const SinkContext&) { return std::make_unique<DoNothingSink>(); },
});

}  // namespace
}  // namespace gcm
