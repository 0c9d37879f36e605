// The job's own signal end to end: `gcm agent` on the fake NVML, and the synthetic trainer
// (tests/integration/synthetic_trainer.py) whose 8 ranks compute in proportion to their GPU's SM clock and report
// through python/gcm_reporter.py over the agent's unix socket. A GPU that slows names its rank (rank_slow on that
// GPU), a rank that stalls with no hardware cause is named too, and a clean job with jitter and evaluation pauses
// raises nothing.
#include <gtest/gtest.h>

#include <sstream>

#include "agent_node.h"

namespace gcm::testing {
namespace {

// The GPUs whose gcm_gpu_health_reason{reason=...} is 1.
std::vector<int> gpus_with_reason(const std::string& page, const std::string& reason) {
  std::vector<int> out;
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("gcm_gpu_health_reason{", 0) != 0 || line.find("reason=\"" + reason + "\"") == std::string::npos ||
        line.substr(line.rfind(' ') + 1) != "1")
      continue;
    size_t g = line.find("gpu=\"") + 5;
    out.push_back(std::stoi(line.substr(g, line.find('"', g) - g)));
  }
  return out;
}

struct TrainerRun {
  AgentNode node{8};
  std::string epoch = std::to_string(static_cast<int64_t>(std::time(nullptr)));

  explicit TrainerRun(int slow_gpu = -1) {
    for (int i = 0; i < 8; ++i) {
      json& d = node.scenario["devices"][static_cast<size_t>(i)];
      d["max_clocks"] = {{"sm", 1980}, {"graphics", 1980}, {"mem", 2619}};
      if (i == slow_gpu)  // 5 % slower from 8 s on, with no clock event reason: the silent straggler
        d["clocks"]["sm"] = {{"schedule", json::array({{{"from_s", 0}, {"value", 1980}}, {{"from_s", 8}, {"value", 1881}}})}};
    }
    node.collect_interval = "0.25";
    node.window = "1";
    node.start({}, env());
  }
  std::vector<std::string> env() const {
    return {"GCM_FAKE_NVML_SCENARIO=" + node.dir + "/scenario.json", std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML,
            "GCM_FAKE_NVML_EPOCH=" + epoch};
  }
  CommandResult train(std::vector<std::string> extra) {
    EXPECT_TRUE(eventually([&] { return std::filesystem::exists(node.dir + "/run/job-signals.sock"); }, 10s));
    CommandSpec s;
    s.argv = {"python3", std::string(GCM_SOURCE_DIR) + "/tests/integration/synthetic_trainer.py", "--endpoint",
              "unix://" + node.dir + "/run/job-signals.sock", "--nvml", GCM_FAKE_NVML, "--seconds", "14"};
    s.argv.insert(s.argv.end(), extra.begin(), extra.end());
    s.extra_env = env();
    s.timeout = 60s;
    return run_command(s);
  }
};

TEST(JobSignals, AGpuFivePercentSlowerNamesItsRank) {
  TrainerRun t(3);
  CommandResult r = t.train({});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string page = t.node.metrics();
  EXPECT_EQ(gpus_with_reason(page, "rank_slow"), std::vector<int>{3}) << t.node.diagnosis();
  EXPECT_EQ(t.node.value("gcm_job_slowest_gpu{job_id=\"4242\"}"), 3);
  EXPECT_EQ(t.node.value("gcm_job_ranks{job_id=\"4242\"}"), 8);
  EXPECT_GT(t.node.value("gcm_job_steps_total{job_id=\"4242\"}").value_or(0), 8 * 100);
  EXPECT_EQ(t.node.value("gcm_jobsignal_requests_refused_total{why=\"unknown_sender\"}"), 0);
}

TEST(JobSignals, ARankStalledWithNoHardwareCauseIsNamed) {
  TrainerRun t;
  // This run's reporter speaks OTLP/JSON; the others protobuf.
  CommandResult r = t.train({"--stall-rank", "5", "--stall-from", "8", "--stall", "0.005", "--encoding", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string page = t.node.metrics();
  EXPECT_EQ(gpus_with_reason(page, "rank_slow"), std::vector<int>{5}) << t.node.diagnosis();
  for (const char* hw : {"peer_slow", "hw_slowdown", "hw_thermal", "power_brake"})
    EXPECT_TRUE(gpus_with_reason(page, hw).empty()) << hw;
}

TEST(JobSignals, ACleanJobWithJitterAndEvaluationPausesRaisesNothing) {
  TrainerRun t;
  CommandResult r = t.train({"--jitter", "0.0067", "--eval-every", "25", "--eval", "0.3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string page = t.node.metrics();
  EXPECT_TRUE(gpus_with_reason(page, "rank_slow").empty()) << page.substr(0, 3000);
  EXPECT_EQ(t.node.value("gcm_job_ranks{job_id=\"4242\"}"), 8);
}

}  // namespace
}  // namespace gcm::testing
