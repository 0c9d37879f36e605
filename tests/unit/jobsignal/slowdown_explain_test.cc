// The explanation of a job's slowdown: the hardware evidence on the job's GPUs that started around the change point,
// ranked, in one sentence naming the slowest rank; a slowdown with no such evidence says "no hardware cause", and
// evidence on a GPU of another job, or evidence that was there long before the change, is not a cause.
#include <gtest/gtest.h>

#include <vector>

#include "jobsignal/slowdown_explain.h"

namespace gcm::jobsignal {
namespace {

constexpr int64_t kStartMs = 1796558400000;  // 2026-12-06 12:00:00 UTC

detector::GpuWindow gpu_at(int gpu, int64_t window, double sm_clock) {
  detector::GpuWindow g;
  g.gpu = static_cast<unsigned>(gpu);
  g.end_unix_ms = kStartMs + window * 60000;
  g.sm_clock_mhz = detector::FieldStats{sm_clock, sm_clock, sm_clock, sm_clock, 10};
  return g;
}

struct Node {
  SlowdownExplainer explainer;
  // Windows 0..last of 4 GPUs at 1980 MHz; `change` edits a GPU's window from `from` on.
  template <class Change>
  void run(int64_t last, int64_t from, Change change, std::vector<RankJudgement> slow_ranks = {}) {
    for (int64_t w = 0; w <= last; ++w) {
      std::vector<detector::GpuWindow> gpus;
      for (int i = 0; i < 4; ++i) {
        gpus.push_back(gpu_at(i, w, 1980));
        if (w >= from) change(gpus.back());
      }
      explainer.observe(w, gpus, w >= from ? slow_ranks : std::vector<RankJudgement>{});
    }
  }
};

StepChange slowdown_at(int64_t window, double rise) { return {StepChange::Kind::Slowdown, window, 0.1, 0.1 * (1 + rise)}; }

RankJudgement slow_rank(int64_t rank, int gpu) {
  RankJudgement r;
  r.job_id = "4242";
  r.rank = rank;
  r.gpu = gpu;
  r.judgement = Judgement::Slow;
  return r;
}

TEST(SlowdownExplain, AThermallyThrottledGpuOfTheJobIsTheCauseAndItsRankIsNamed) {
  Node n;
  n.run(14, 10, [](detector::GpuWindow& g) {
    if (g.gpu == 3) {
      g.sm_clock_mhz->mean = 1762;  // 11 % under 1980
      g.hw_thermal_fraction = 0.8;
    }
  }, {slow_rank(19, 3)});
  SlowdownExplanation e = n.explainer.explain("4242", slowdown_at(10, 0.12), {0, 1, 2, 3}, 7, 1, "node50");
  ASSERT_TRUE(e.hardware_cause());
  EXPECT_EQ(e.findings[0].kind, "hw_thermal");
  EXPECT_EQ(e.findings[0].gpu, 3);
  EXPECT_EQ(e.rank, 19);
  EXPECT_EQ(e.gpu, 3);
  EXPECT_EQ(e.sentence,
            "step time of job 4242 rose 12 % at 12:10; rank 19 (GPU 3 on node50) has been the slowest since 12:10, "
            "when its SM clock fell 11 % under HW thermal slowdown");
}

TEST(SlowdownExplain, ASilentClockDropIsACauseEvenWithoutAReason) {
  Node n;
  n.run(14, 10, [](detector::GpuWindow& g) {
    if (g.gpu == 2) g.sm_clock_mhz->mean = 1881;
  });
  SlowdownExplanation e = n.explainer.explain("4242", slowdown_at(10, 0.05), {0, 1, 2, 3}, 2, 2, "node50");
  ASSERT_EQ(e.findings.size(), 1u);
  EXPECT_EQ(e.findings[0].kind, "clock_drop");
  EXPECT_NE(e.sentence.find("rank 2 (GPU 2 on node50) is the slowest, when its SM clock fell 5 % (no clock event "
                            "reason set)"),
            std::string::npos)
      << e.sentence;
}

TEST(SlowdownExplain, NoEvidenceSaysNoHardwareCause) {
  Node n;
  n.run(14, 10, [](detector::GpuWindow&) {}, {slow_rank(5, 1)});
  SlowdownExplanation e = n.explainer.explain("4242", slowdown_at(10, 0.08), {0, 1, 2, 3}, 5, 1, "node50");
  EXPECT_FALSE(e.hardware_cause());
  EXPECT_EQ(e.rank, 5);
  EXPECT_NE(e.sentence.find("rank 5 (GPU 1 on node50) has been the slowest since 12:10; no hardware cause found on "
                            "the job's GPUs (software or data)"),
            std::string::npos)
      << e.sentence;
}

TEST(SlowdownExplain, EvidenceOnAnotherJobsGpuOrLongBeforeTheChangeIsNoCause) {
  Node n;
  // GPU 0 (another job's) throttles at the change; GPU 1 (this job's) has been under the power cap all along.
  n.run(14, 0, [](detector::GpuWindow& g) {
    if (g.gpu == 1) g.sw_power_cap_fraction = 0.9;
    if (g.gpu == 0 && g.end_unix_ms >= kStartMs + 10 * 60000) {
      g.hw_slowdown_fraction = 1;
      g.sm_clock_mhz->mean = 1500;
    }
  });
  SlowdownExplanation e = n.explainer.explain("4242", slowdown_at(10, 0.06), {1, 2, 3}, 2, 2, "node50");
  EXPECT_FALSE(e.hardware_cause()) << e.sentence;
}

TEST(SlowdownExplain, FindingsAreRankedAnXidFirst) {
  Node n;
  n.run(14, 10, [](detector::GpuWindow& g) {
    if (g.gpu == 1) g.pcie_replays = 40;
    if (g.gpu == 2 && g.end_unix_ms == kStartMs + 11 * 60000) g.xids.push_back({79, "RESET_GPU", true});
    if (g.gpu == 3) g.sw_power_cap_fraction = 0.5;
  });
  SlowdownExplanation e = n.explainer.explain("4242", slowdown_at(10, 0.2), {0, 1, 2, 3}, 0, 0, "node50");
  ASSERT_EQ(e.findings.size(), 3u) << e.sentence;
  EXPECT_EQ(e.findings[0].kind, "xid");
  EXPECT_EQ(e.findings[1].kind, "pcie_replays");
  EXPECT_EQ(e.findings[2].kind, "sw_power_cap");
  EXPECT_NE(e.sentence.find("on the job's GPUs: GPU 2 on node50: XID 79 (RESET_GPU)"), std::string::npos) << e.sentence;
}

TEST(SlowdownExplain, ARecoveryIsSaidAsOne) {
  Node n;
  n.run(14, 10, [](detector::GpuWindow&) {});
  StepChange back{StepChange::Kind::Recovery, 12, 0.1, 0.101};
  SlowdownExplanation e = n.explainer.explain("4242", back, {0, 1}, 0, 0, "node50");
  EXPECT_EQ(e.sentence, "step time of job 4242 is back within 2 % of its level before the slowdown since 12:12");
}

}  // namespace
}  // namespace gcm::jobsignal
