// The job's own signal end to end: `gcm agent` on the fake NVML, and the synthetic trainer
// (tests/integration/synthetic_trainer.py) whose 8 ranks compute in proportion to their GPU's SM clock and report
// through python/gcm_reporter.py over the agent's unix socket. A GPU that slows names its rank (rank_slow on that
// GPU), a rank that stalls with no hardware cause is named too, and a clean job with jitter and evaluation pauses
// raises nothing.
#include <gtest/gtest.h>

#include <regex>
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

  // slow_gpu: its SM clock falls to `slow_mhz` (1881: 5 % slower) at `slow_from_s`, with no clock event reason: the
  // silent straggler.
  explicit TrainerRun(int slow_gpu = -1, int slow_mhz = 1881, int slow_from_s = 8) {
    for (int i = 0; i < 8; ++i) {
      json& d = node.scenario["devices"][static_cast<size_t>(i)];
      d["max_clocks"] = {{"sm", 1980}, {"graphics", 1980}, {"mem", 2619}};
      if (i == slow_gpu)
        d["clocks"]["sm"] = {{"schedule", json::array({{{"from_s", 0}, {"value", 1980}},
                                                       {{"from_s", slow_from_s}, {"value", slow_mhz}}})}};
    }
    node.collect_interval = "0.25";
    node.window = "1";
    node.start({}, env());
  }
  std::vector<std::string> env() const {
    return {"GCM_FAKE_NVML_SCENARIO=" + node.dir + "/scenario.json", std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML,
            "GCM_FAKE_NVML_EPOCH=" + epoch};
  }
  CommandResult train(std::vector<std::string> extra, int seconds = 14) {
    EXPECT_TRUE(eventually([&] { return std::filesystem::exists(node.dir + "/run/job-signals.sock"); }, 10s));
    CommandSpec s;
    s.argv = {"python3", std::string(GCM_SOURCE_DIR) + "/tests/integration/synthetic_trainer.py", "--endpoint",
              "unix://" + node.dir + "/run/job-signals.sock", "--nvml", GCM_FAKE_NVML, "--seconds",
              std::to_string(seconds)};
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
  // `gcm agent status` lists the job's 8 ranks; rank 3 on GPU 3 is the slow one.
  CommandSpec st;
  st.argv = {gcm_binary(), "agent", "status", "--path.run", t.node.dir + "/run"};
  CommandResult status = run_command(st);
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("Job-signal ranks (last window):"), std::string::npos) << status.out;
  std::regex slow_rank(R"(\n  4242 +3 +3 +[0-9.]+ s compute +slow\n)");
  EXPECT_TRUE(std::regex_search(status.out, slow_rank)) << status.out;
}

// The agent's log line of the job's slowdown (the sentence of its JobSlowdownEvent), "" without one.
std::string slowdown_sentence(const std::string& log) {
  size_t at = log.find("agent: job 4242: step time of job 4242 rose");
  if (at == std::string::npos) return "";
  at = log.find("step time", at);
  return log.substr(at, log.find('\n', at) - at);
}

// A GPU 10 % slower stretches every rank's step ~8 % (the collective waits for its rank): a slowdown of the job,
// explained by that GPU's clock, naming its rank. The warm-up and the reference take the first 10 s of windows.
TEST(JobSignals, AGpuTenPercentSlowerIsTheJobsExplainedSlowdown) {
  TrainerRun t(3, 1782, 12);
  CommandResult r = t.train({}, 26);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(t.node.value("gcm_job_slowdown_events_total{job_id=\"4242\"}"), 1) << t.node.diagnosis();
  EXPECT_EQ(t.node.value("gcm_job_slowdown_info{job_id=\"4242\",hardware_cause=\"clock_drop\"}"), 1)
      << t.node.metrics().substr(0, 4000);
  EXPECT_EQ(t.node.value("gcm_job_slowdown_rank{job_id=\"4242\"}"), 3);
  EXPECT_EQ(t.node.value("gcm_job_slowdown_cause_gpu{job_id=\"4242\"}"), 3);
  EXPECT_GT(t.node.value("gcm_job_slowdown_rise_ratio{job_id=\"4242\"}").value_or(0), 0.05);
  EXPECT_EQ(t.node.value("gcm_job_slowed{job_id=\"4242\"}"), 1);
  std::string sentence = slowdown_sentence(t.node.log());
  std::regex explained(R"(^step time of job 4242 rose [0-9]+ % at [0-9:]+; rank 3 \(GPU 3 on [^)]+\) has been the )"
                       R"(slowest since [0-9:]+, when its SM clock fell 10 % \(no clock event reason set\))");
  EXPECT_TRUE(std::regex_search(sentence, explained)) << sentence << "\n" << t.node.diagnosis();
}

TEST(JobSignals, ARankStalledWithNoHardwareCauseIsNamed) {
  TrainerRun t;
  // This run's reporter speaks OTLP/JSON; the others protobuf.
  CommandResult r =
      t.train({"--stall-rank", "5", "--stall-from", "12", "--stall", "0.005", "--encoding", "json"}, 26);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string page = t.node.metrics();
  EXPECT_EQ(gpus_with_reason(page, "rank_slow"), std::vector<int>{5}) << t.node.diagnosis();
  for (const char* hw : {"peer_slow", "hw_slowdown", "hw_thermal", "power_brake"})
    EXPECT_TRUE(gpus_with_reason(page, hw).empty()) << hw;
  // The job's steps are ~8 % slower: its slowdown names the stalled rank and finds no hardware cause.
  EXPECT_EQ(t.node.value("gcm_job_slowdown_events_total{job_id=\"4242\"}"), 1) << t.node.diagnosis();
  EXPECT_EQ(t.node.value("gcm_job_slowdown_info{job_id=\"4242\",hardware_cause=\"none\"}"), 1);
  std::string sentence = slowdown_sentence(t.node.log());
  EXPECT_NE(sentence.find("rank 5 (GPU 5 on "), std::string::npos) << sentence << "\n" << t.node.diagnosis();
  EXPECT_NE(sentence.find("; no hardware cause found on the job's GPUs (software or data)"), std::string::npos)
      << sentence;
}

TEST(JobSignals, ACleanJobWithJitterAndEvaluationPausesRaisesNothing) {
  TrainerRun t;
  CommandResult r = t.train({"--jitter", "0.0067", "--eval-every", "25", "--eval", "0.3"}, 26);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string page = t.node.metrics();
  EXPECT_TRUE(gpus_with_reason(page, "rank_slow").empty()) << page.substr(0, 3000);
  EXPECT_EQ(t.node.value("gcm_job_ranks{job_id=\"4242\"}"), 8);
  // The job had a reference to compare with, and no slowdown.
  ASSERT_TRUE(t.node.value("gcm_job_step_time_ratio{job_id=\"4242\"}")) << page.substr(0, 3000);
  EXPECT_EQ(t.node.value("gcm_job_slowdown_events_total{job_id=\"4242\"}"), 0) << slowdown_sentence(t.node.log());
}

}  // namespace
}  // namespace gcm::testing
