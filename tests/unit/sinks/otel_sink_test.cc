// The otel sink: an export failure is the SinkError every sink throws.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "refused_port.h"
#include "sinks/sink.h"
#include "sink_fixtures.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using namespace std::chrono_literals;
using namespace gcm::sink_testing;
using gcm::testing::slurp;
using gcm::testing::TempDir;

// The exporter fails with its own error type (otlp/ knows nothing of sinks); the otel sink reports it as the
// SinkError every other sink throws, which the loop counts as a sink failure.
TEST(OtelSink, AnExportFailureIsASinkError) {
  gcm::testing::RefusedPort refused;
  int port = refused.port();
  auto sink =
      make_sink("otel", {"otel_endpoint=http://127.0.0.1:" + std::to_string(port), "otel_timeout=2"}, quick_retries(0));
  std::string err = sink_error([&] { send(*sink, {rec(log_schema(), "c1", 1)}); });
  EXPECT_NE(err.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << err;
  EXPECT_NE(err, "(no SinkError)");
}

}  // namespace
}  // namespace gcm
