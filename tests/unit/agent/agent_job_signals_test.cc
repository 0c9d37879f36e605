// The agent's job-signal endpoint: where its socket is, a bad --job-signal-listen that is the operator's error, and
// a socket that cannot be bound that only turns job signals off.
#include "agent/agent_job_signals.h"

#include <fstream>

#include <gtest/gtest.h>

#include "agent/agent.h"
#include "core/logging.h"
#include "temp_dir.h"

namespace gcm::agent {
namespace {

TEST(AgentJobSignals, TheSocketIsUnderThePathRunUnlessNamed) {
  AgentOptions opts;
  opts.path_run = "/run/gcm-test";
  EXPECT_EQ(job_signal_options(opts).socket_path, "/run/gcm-test/job-signals.sock");
  opts.job_signal_socket = "/tmp/js.sock";
  EXPECT_EQ(job_signal_options(opts).socket_path, "/tmp/js.sock");
}

TEST(AgentJobSignals, OffByOptionIsNotStarted) {
  AgentOptions opts;
  opts.no_job_signals = true;
  AgentCounters counters;
  AgentJobSignals js(stderr_logger("agent-job-signals-test"));
  js.start(opts, counters);
  EXPECT_FALSE(js.running());
}

TEST(AgentJobSignals, ASocketThatCannotBeBoundTurnsThemOffAndSaysSo) {
  gcm::testing::TempDir dir;
  AgentOptions opts;
  std::ofstream(dir.file("plain")) << "a file, not a directory\n";
  opts.job_signal_socket = dir.file("plain/js.sock");
  AgentCounters counters;
  AgentJobSignals js(stderr_logger("agent-job-signals-test"));
  js.start(opts, counters);
  EXPECT_FALSE(js.running());
  EXPECT_EQ(counters.source("job_signals").errors, 1u);
  EXPECT_FALSE(counters.source("job_signals").up);
}

TEST(AgentJobSignals, AListenAddressOffLoopbackIsAUsageError) {
  gcm::testing::TempDir dir;
  AgentOptions opts;
  opts.job_signal_socket = dir.file("js.sock");
  opts.job_signal_listen = "0.0.0.0:9999";
  AgentCounters counters;
  AgentJobSignals js(stderr_logger("agent-job-signals-test"));
  EXPECT_THROW(js.start(opts, counters), AgentUsageError);
}

TEST(AgentJobSignals, ARunningEndpointIsCountedUp) {
  gcm::testing::TempDir dir;
  AgentOptions opts;
  opts.job_signal_socket = dir.file("js.sock");
  AgentCounters counters;
  AgentJobSignals js(stderr_logger("agent-job-signals-test"));
  js.start(opts, counters);
  EXPECT_TRUE(js.running());
  EXPECT_TRUE(counters.source("job_signals").up);
  js.stop();
  EXPECT_FALSE(js.running());
}

}  // namespace
}  // namespace gcm::agent
