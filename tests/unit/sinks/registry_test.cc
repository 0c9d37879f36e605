// make_sink()'s shutdown guarantee: a sink nobody shuts down is shut down when destroyed, exactly once, and a
// failure reaches an explicit caller.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/shutdown.h"
#include "sinks/sink.h"
#include "sink_fixtures.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using namespace std::chrono_literals;
using namespace gcm::sink_testing;
using gcm::testing::slurp;
using gcm::testing::TempDir;

// A sink that counts what it is asked, registered in the test binary only.
struct Calls {
  int writes = 0, flushes = 0, shutdowns = 0;
};
Calls g_calls;
class CountingSink : public Sink {
 public:
  void write(const Record&) override { ++g_calls.writes; }
  void flush() override { ++g_calls.flushes; }
  void shutdown() override {
    ++g_calls.shutdowns;
    if (fail_) throw SinkError("the receiver is gone");
  }
  bool fail_ = false;
};
const bool kCountingRegistered = register_sink({
    "test_counting",
    "counts calls (unit tests)",
    {{"fail", "bool", "shutdown fails", ""}},
    [](const SinkOptions& o, const SinkContext&) {
      auto s = std::make_unique<CountingSink>();
      s->fail_ = o.get_bool("fail", false);
      return s;
    },
});

TEST(SinkShutdown, ASinkNobodyShutsDownIsShutDownWhenDestroyed) {
  g_calls = {};
  {
    auto sink = make_sink("test_counting", {}, quick_retries(0));
    send(*sink, {rec(log_schema(), "c1", 1)});
  }  // the owner left without a word (an exception, a forgotten call)
  EXPECT_EQ(g_calls.shutdowns, 1);
}

TEST(SinkShutdown, ExactlyOnceAndNothingIsWrittenAfterIt) {
  g_calls = {};
  {
    auto sink = make_sink("test_counting", {}, quick_retries(0));
    sink->flush();
    sink->shutdown();
    sink->shutdown();
    std::string err = sink_error([&] { send(*sink, {rec(log_schema(), "c1", 1)}); });
    EXPECT_NE(err.find("sink 'test_counting' was already shut down"), std::string::npos) << err;
  }
  EXPECT_EQ(g_calls.shutdowns, 1);
  EXPECT_EQ(g_calls.flushes, 1);
  EXPECT_EQ(g_calls.writes, 0);
}

TEST(SinkShutdown, AFailureReachesAnExplicitCallerAndIsNotRetriedAtDestruction) {
  g_calls = {};
  {
    auto sink = make_sink("test_counting", {"fail=true"}, quick_retries(0));
    EXPECT_NE(sink_error([&] { sink->shutdown(); }).find("the receiver is gone"), std::string::npos);
  }
  EXPECT_EQ(g_calls.shutdowns, 1);
}

TEST(SinkShutdown, AWebhookChunkLeftOpenIsDeliveredAtExit) {
  Receiver rx;
  {
    auto sink = make_sink("webhook", {"url=" + rx.url()}, quick_retries(0));
    BatchInfo info;
    info.schema = &log_schema();
    sink->begin_round(info);
    sink->begin_chunk(info);
    sink->write(rec(log_schema(), "c1", 1));
    // no end_chunk: the round was cut short
  }
  auto reqs = rx.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_NE(reqs[0].body.find("\"c1\""), std::string::npos) << reqs[0].body;
}

}  // namespace
}  // namespace gcm
