// What the state file says after a window: the problems the prolog's agent-verdict check reads, one sentence each,
// in the order NVML, checks, GPUs, the node's own reasons.
#include "agent/window_state.h"

#include <gtest/gtest.h>

namespace gcm::agent {
namespace {

TEST(WindowState, EachProblemIsOneSentenceInItsOrder) {
  WindowFacts facts{1700000000000, 30, "node1", "550.54", ""};
  std::map<std::string, CheckResult> checks;
  checks["dmesg"] = CheckResult{"dmesg", 2, "GPU fell off the bus", 1699999990, 1699999991, false};
  checks["memory"] = CheckResult{"memory", 0, "ok", 1699999990, 1699999990.5, false};
  std::vector<detector::GpuWindow> summaries(2);
  summaries[0].gpu = 0;
  summaries[0].uuid = "GPU-aaa";
  summaries[0].job_id = "42";
  summaries[1].gpu = 1;
  summaries[1].presence = detector::Presence::Lost;
  std::vector<detector::GpuVerdict> verdicts(2);
  verdicts[1].gpu = 1;
  verdicts[1].state = detector::HealthState::Failed;
  verdicts[1].reasons.add(detector::Reason::Lost);
  verdicts[1].evidence = "GPU 1 lost";
  XidTracker xids;
  NodeStateEntry node{"fabric_manager", Health::Degraded, "nvidia-fabricmanager is not running", 0};

  AgentState st = window_state(facts, checks, summaries, verdicts, xids, {node});
  EXPECT_EQ(st.written_unix_ms, 1700000000000);
  EXPECT_EQ(st.hostname, "node1");
  EXPECT_EQ(st.driver_version, "550.54");
  ASSERT_EQ(st.checks.size(), 2u);
  EXPECT_EQ(st.checks[0].finished_unix_ms, 1699999991000);
  ASSERT_EQ(st.gpus.size(), 2u);
  EXPECT_EQ(st.gpus[0].job_id, "42");
  EXPECT_EQ(st.gpus[0].health, Health::Ok);
  EXPECT_EQ(st.gpus[1].presence, "lost");
  EXPECT_EQ(st.gpus[1].health, Health::Failed);
  EXPECT_EQ(st.gpus[1].reasons, std::vector<std::string>{"lost"});
  ASSERT_EQ(st.node.size(), 1u);
  EXPECT_EQ(st.problems,
            (std::vector<std::string>{"check 'dmesg': GPU fell off the bus", "GPU 1 failed: GPU 1 lost",
                                      "node degraded (fabric_manager): nvidia-fabricmanager is not running"}));
}

TEST(WindowState, NvmlThatIsMissingIsTheFirstProblem) {
  WindowFacts facts{1700000000000, 30, "node1", "", "libnvidia-ml.so.1: cannot open shared object file"};
  XidTracker xids;
  AgentState st = window_state(facts, {}, {}, {}, xids, {});
  EXPECT_EQ(st.nvml_error, facts.nvml_error);
  ASSERT_EQ(st.problems.size(), 1u);
  EXPECT_EQ(st.problems[0], "NVML unavailable: libnvidia-ml.so.1: cannot open shared object file");
}

TEST(WindowState, AGpusActiveXidsAreInItsEntry) {
  WindowFacts facts{1700000100000, 30, "node1", "550.54", ""};
  XidTracker xids;
  xids.set_gpus({{0, "GPU-aaa", "00000000:3B:00.0"}});
  xids.add_nvml(0, 79, 1700000090.0);
  std::vector<detector::GpuWindow> summaries(1);
  AgentState st = window_state(facts, {}, summaries, {}, xids, {});
  ASSERT_EQ(st.gpus.size(), 1u);
  EXPECT_EQ(st.gpus[0].active_xids, std::vector<int>{79});
}

}  // namespace
}  // namespace gcm::agent
