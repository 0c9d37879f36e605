// The agent's account of itself: a source's failures counted with the last one kept, and kAgentSelf / kAgentSource
// as the agent exports them.
#include "agent/agent_counters.h"

#include <gtest/gtest.h>

namespace gcm::agent {
namespace {

TEST(AgentCounters, AFailureIsCountedAndOnlyANewOneIsWorthALogLine) {
  SourceStats s;
  EXPECT_TRUE(s.failed("scontrol timed out"));
  EXPECT_FALSE(s.failed("scontrol timed out"));
  EXPECT_TRUE(s.failed("scontrol not found"));
  EXPECT_EQ(s.errors, 3u);
  EXPECT_EQ(s.last_error, "scontrol not found");
}

TEST(AgentCounters, SourcesAreRecordsByNameWithTheirLastErrorOnlyWhenThereIsOne) {
  AgentCounters c;
  c.source("nvml").up = true;
  c.source("nvml").timeouts = 2;
  c.source("attribution").failed("slurmctld: connection refused");
  std::vector<Record> r = c.source_records();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].at("source").as_string(), "attribution");
  EXPECT_EQ(r[0].at("up").as_int(), 0);
  EXPECT_EQ(r[0].at("errors").as_int(), 1);
  EXPECT_EQ(r[0].at("last_error").as_string(), "slurmctld: connection refused");
  EXPECT_EQ(r[1].at("source").as_string(), "nvml");
  EXPECT_EQ(r[1].at("up").as_int(), 1);
  EXPECT_EQ(r[1].at("timeouts").as_int(), 2);
  EXPECT_TRUE(r[1].at("last_error").is_null());
}

TEST(AgentCounters, SelfRecordCountsSamplesAndWindowsAndReadsTheProcessItself) {
  AgentCounters c;
  c.sampled(0.25);
  c.sampled(0.5);
  c.window_closed();
  Record r = c.self_record({"node7", true, 8, 4096});
  EXPECT_EQ(r.at("hostname").as_string(), "node7");
  EXPECT_EQ(r.at("samples").as_int(), 2);
  EXPECT_EQ(r.at("windows").as_int(), 1);
  EXPECT_EQ(r.at("nvml_up").as_int(), 1);
  EXPECT_EQ(r.at("gpus").as_int(), 8);
  EXPECT_EQ(r.at("metrics_bytes").as_int(), 4096);
  EXPECT_DOUBLE_EQ(r.at("last_sample_duration").as_double(), 0.5);
  EXPECT_GT(r.at("resident_memory").as_int(), 0);
  EXPECT_GE(r.at("cpu").as_double(), 0.0);
}

}  // namespace
}  // namespace gcm::agent
