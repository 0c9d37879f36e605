// The node-local straggler rule on ranks' step times: one slow rank is named, a whole-job phase never is, jitter is
// not a fault, NCCL collective times name the rank the others wait for, and the detector's persistence turns the
// flag into reason rank_slow, which never drains a node or fails a prolog alone.
#include <gtest/gtest.h>

#include <random>

#include "agent/agent_state.h"
#include "agent/drain_control.h"
#include "detector/detector.h"
#include "jobsignal/rank_slow.h"

namespace gcm::jobsignal {
namespace {

// One window of a job of `ranks` ranks on GPUs 0..ranks-1 with compute times around `base` (relative jitter), rank
// `slow` stretched by `slowdown`.
JobWindow window(std::mt19937& rng, int ranks, double base, double jitter, int slow = -1, double slowdown = 0,
                 bool collective = false) {
  std::normal_distribution<double> noise(0, jitter);
  JobWindow jw;
  jw.job_id = "4242";
  for (int r = 0; r < ranks; ++r) {
    RankWindow w;
    w.rank = r;
    w.gpu = r;
    w.pid = 1000 + r;
    w.steps = 30;
    w.step_duration = 1.0;
    double v = base * (1 + noise(rng)) * (r == slow ? 1 + slowdown : 1);
    if (collective) {
      // The others wait for the slow rank in the collective: their collective time grows, its own does not.
      w.collective_time = r == slow ? 0.010 * (1 + noise(rng)) : 0.010 * (1 + noise(rng)) + base * slowdown;
    } else {
      w.compute_duration = v;
    }
    jw.ranks.push_back(w);
  }
  return jw;
}

int slow_ranks(const std::vector<RankJudgement>& js, int64_t* which = nullptr) {
  int n = 0;
  for (const auto& j : js)
    if (j.judgement == Judgement::Slow) {
      ++n;
      if (which) *which = j.rank;
    }
  return n;
}

TEST(RankSlow, OneRankFivePercentSlowerIsNamedAfterTheWarmUp) {
  std::mt19937 rng(1);
  RankSlowJudge judge;
  detector::DetectorConfig c;
  for (int i = 0; i < c.warmup_windows; ++i) {
    auto js = judge.judge({window(rng, 8, 0.4, 0.003)});
    for (const auto& j : js) EXPECT_EQ(j.judgement, Judgement::Held) << "warm-up window " << i;
  }
  int64_t which = -1;
  auto js = judge.judge({window(rng, 8, 0.4, 0.003, 3, 0.05)});
  EXPECT_EQ(slow_ranks(js, &which), 1);
  EXPECT_EQ(which, 3);
  const RankJudgement& j = js[3];
  EXPECT_STREQ(j.signal, "compute");
  EXPECT_EQ(j.peers, 7);
  EXPECT_NEAR(j.deviation, 0.05, 0.015);
  EXPECT_NE(j.evidence.find("rank_slow: rank 3 compute"), std::string::npos) << j.evidence;
  EXPECT_NE(j.evidence.find("7 peers, job 4242"), std::string::npos) << j.evidence;
}

TEST(RankSlow, AWholeJobPhaseIsNeverAFault) {
  std::mt19937 rng(2);
  RankSlowJudge judge;
  for (int i = 0; i < 6; ++i) judge.judge({window(rng, 8, 0.4, 0.003)});
  // Evaluation or a checkpoint: every rank 40 % slower together, for a few windows, then back.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(slow_ranks(judge.judge({window(rng, 8, 0.56, 0.003)})), 0);
  EXPECT_EQ(slow_ranks(judge.judge({window(rng, 8, 0.4, 0.003)})), 0);
  // Half of the ranks slower (a data stall of one loader shared by them): a job effect, not one bad rank.
  JobWindow half = window(rng, 8, 0.4, 0.003);
  for (int r = 0; r < 4; ++r) *half.ranks[static_cast<size_t>(r)].compute_duration *= 1.2;
  auto js = judge.judge({half});
  EXPECT_EQ(slow_ranks(js), 0);
  int job_effect = 0;
  for (const auto& j : js) job_effect += j.job_effect;
  EXPECT_GE(job_effect, 3);
}

TEST(RankSlow, TwoPercentJitterRaisesNothingOverALongRun) {
  std::mt19937 rng(3);
  RankSlowJudge judge;
  int flagged = 0;
  for (int i = 0; i < 2000; ++i) flagged += slow_ranks(judge.judge({window(rng, 8, 0.4, 0.02 / 3)}));
  // A flag in a single window is not a state (persistence needs 3 of 5): count the windows flagged.
  EXPECT_LE(flagged, 4) << "windows flagged over 2000 clean windows of 8 ranks";
}

TEST(RankSlow, FromCollectivesTheRankTheOthersWaitForIsSlow) {
  std::mt19937 rng(4);
  RankSlowJudge judge;
  for (int i = 0; i < 6; ++i) judge.judge({window(rng, 8, 0.4, 0.01, -1, 0, true)});
  int64_t which = -1;
  auto js = judge.judge({window(rng, 8, 0.4, 0.01, 5, 0.05, true)});
  EXPECT_EQ(slow_ranks(js, &which), 1);
  EXPECT_EQ(which, 5);
  EXPECT_STREQ(js[5].signal, "collective");
  EXPECT_NE(js[5].evidence.find("the others wait for it"), std::string::npos) << js[5].evidence;
}

TEST(RankSlow, TooFewRanksAreHeldNotJudged) {
  std::mt19937 rng(5);
  RankSlowJudge judge;
  for (int i = 0; i < 8; ++i)
    for (const auto& j : judge.judge({window(rng, 2, 0.4, 0.003, 1, 0.3)})) EXPECT_EQ(j.judgement, Judgement::Held);
}

// The detector's persistence on the flag: suspect, then degraded after 3 of 5 windows, with the evidence; the
// node is neither drained nor failed at the prolog for rank_slow alone; it clears once the job stops reporting.
TEST(RankSlow, TheDetectorHoldsReasonRankSlowWithPeerSlowsPersistence) {
  detector::Detector det;
  std::vector<detector::GpuVerdict> v;
  auto windows = [](detector::GpuWindow::RankSignal s) {
    std::vector<detector::GpuWindow> ws(4);
    for (unsigned g = 0; g < 4; ++g) ws[g].gpu = g;
    ws[2].rank_signal = s;
    ws[2].rank_evidence = "rank_slow: rank 2 compute 0.42 s vs peers' median 0.40 s (+5.0 %, z 9.0, 3 peers, job 7)";
    return ws;
  };
  v = det.observe(windows(detector::GpuWindow::RankSignal::Slow));
  EXPECT_EQ(v[2].state, detector::HealthState::Suspect);
  v = det.observe(windows(detector::GpuWindow::RankSignal::Held));  // no step this window: held
  EXPECT_EQ(v[2].state, detector::HealthState::Suspect);
  v = det.observe(windows(detector::GpuWindow::RankSignal::Slow));
  v = det.observe(windows(detector::GpuWindow::RankSignal::Slow));
  EXPECT_EQ(v[2].state, detector::HealthState::Degraded);
  EXPECT_TRUE(v[2].reasons.has(detector::Reason::RankSlow));
  EXPECT_NE(v[2].evidence.find("rank_slow: rank 2 compute"), std::string::npos) << v[2].evidence;
  EXPECT_EQ(v[0].state, detector::HealthState::Ok);
  EXPECT_EQ(agent::drain_evidence(v), "") << "rank_slow alone is no drain";

  agent::AgentState st;
  st.written_unix_ms = 1000;
  st.window_seconds = 30;
  agent::GpuStateEntry e;
  e.gpu = 2;
  e.health = agent::Health::Degraded;
  e.reasons = {"rank_slow"};
  st.gpus.push_back(e);
  EXPECT_EQ(agent::judge_agent_state(st, 2000, "state", 3).code, 0) << "nor a prolog failure";
  st.gpus[0].reasons.push_back("hw_thermal");
  EXPECT_EQ(agent::judge_agent_state(st, 2000, "state", 3).code, 2) << "with a hardware reason it is";

  // The job ended (no job reports for the GPU): clean windows clear it.
  detector::DetectorConfig c;
  for (int i = 0; i < c.clear_windows; ++i) v = det.observe(windows(detector::GpuWindow::RankSignal::Clean));
  EXPECT_EQ(v[2].state, detector::HealthState::Ok);
}

}  // namespace
}  // namespace gcm::jobsignal
