// Peer comparison: only busy GPUs of the same job past the warm-up; the SM clock convicts, power and utilisation
// do not; more than a quarter of the peers deviating is a node or workload effect.
#include <gtest/gtest.h>

#include "detector/detector.h"
#include "detector_test_windows.h"

namespace gcm::detector {
namespace {

// Feeds `rounds` windows; `change` edits the node's windows of each round (index of the round given).
template <typename F>
std::vector<GpuVerdict> run(Detector& d, int rounds, F change) {
  std::vector<GpuVerdict> out;
  for (int r = 0; r < rounds; ++r) {
    auto ws = test::busy_node();
    change(ws, r);
    out = d.observe(ws);
  }
  return out;
}

TEST(DetectorPeer, AFivePercentSlowGpuIsFlaggedAfterTheWarmup) {
  Detector d;
  auto v = run(d, 10, [](auto& ws, int r) {
    if (r >= 6) ws[3].sm_clock_mhz = test::flat(1980 * 0.93 * 0.95);
  });
  EXPECT_TRUE(v[3].reasons.has(Reason::PeerSlow));
  EXPECT_EQ(v[3].state, HealthState::Degraded);
  const auto& sm = v[3].signals[0];
  EXPECT_NEAR(sm.deviation, -0.05, 0.002);
  EXPECT_LT(sm.zscore, -3);
  EXPECT_EQ(v[3].peers, 7);
  EXPECT_NE(v[3].evidence.find("peers' median"), std::string::npos) << v[3].evidence;
  for (unsigned g = 0; g < 8; ++g) {
    if (g != 3) {
      EXPECT_EQ(v[g].state, HealthState::Ok) << g;
    }
  }
}

TEST(DetectorPeer, NoComparisonDuringTheWarmup) {
  Detector d;
  auto v = run(d, 4, [](auto& ws, int) { ws[3].sm_clock_mhz = test::flat(1980 * 0.5); });
  EXPECT_EQ(v[3].state, HealthState::Ok);
}

TEST(DetectorPeer, IdleGpusAndOtherJobsAreNotPeers) {
  Detector d;
  auto v = run(d, 10, [](auto& ws, int) {
    for (int g = 4; g < 8; ++g) {  // another job, idle and slow-clocked: not peers of GPUs 0..3
      ws[g].job_id = "43";
      ws[g].gpu_util_percent = test::flat(0);
      ws[g].sm_clock_mhz = test::flat(345);
    }
  });
  for (const auto& x : v) EXPECT_EQ(x.state, HealthState::Ok) << x.gpu << " " << x.evidence;
  EXPECT_EQ(v[0].peers, 3);
  EXPECT_FALSE(v[5].signals[0].evaluated);
}

TEST(DetectorPeer, PipelineStagePowerAndUtilisationDifferencesDoNotConvict) {
  Detector d;
  auto v = run(d, 40, [](auto& ws, int r) {
    for (int g = 4; g < 8; ++g) {
      ws[g].power_watts = test::flat(600 * 0.87);     // 13 % less power
      ws[g].gpu_util_percent = test::flat(98 * 0.9);  // 10 % less busy
    }
    if (r >= 20) ws[6].power_watts = test::flat(600 * 0.7);  // and one drops its power further: still no conviction
  });
  for (const auto& x : v) EXPECT_EQ(x.state, HealthState::Ok) << x.gpu << " " << x.evidence;
  EXPECT_LT(v[6].signals[1].raw_deviation, -0.2);  // reported, though
}

TEST(DetectorPeer, MoreThanAQuarterOfPeersDeviatingIsANodeEffect) {
  Detector d;
  auto v = run(d, 12, [](auto& ws, int r) {
    if (r < 6) return;
    for (int g : {1, 3, 5}) ws[g].sm_clock_mhz = test::flat(1980 * 0.93 * 0.9);  // 3 of 8: 2 of 7 peers > 1/4
  });
  for (const auto& x : v) EXPECT_EQ(x.state, HealthState::Ok) << x.gpu << " " << x.evidence;

  Detector d2;
  v = run(d2, 12, [](auto& ws, int r) {
    if (r < 6) return;
    for (int g : {1, 3}) ws[g].sm_clock_mhz = test::flat(1980 * 0.93 * 0.9);  // 2 of 8: 1 of 7 peers, not > 1/4
  });
  EXPECT_EQ(v[1].state, HealthState::Degraded);
  EXPECT_EQ(v[3].state, HealthState::Degraded);
}

TEST(DetectorPeer, AGpusUsualOffsetIsLearnedButAStepIsNot) {
  Detector d;
  // GPU 2 runs 1.5 % below its peers from the start (its silicon): learned, not flagged; then a 4 % step.
  auto v = run(d, 60, [](auto& ws, int) { ws[2].sm_clock_mhz = test::flat(1980 * 0.93 * 0.985); });
  EXPECT_EQ(v[2].state, HealthState::Ok);
  EXPECT_NEAR(v[2].signals[0].baseline, -0.015, 0.002);
  v = run(d, 5, [](auto& ws, int) { ws[2].sm_clock_mhz = test::flat(1980 * 0.93 * 0.985 * 0.96); });
  EXPECT_EQ(v[2].state, HealthState::Degraded) << v[2].evidence;
  double frozen = v[2].signals[0].baseline;
  v = run(d, 30, [](auto& ws, int) { ws[2].sm_clock_mhz = test::flat(1980 * 0.93 * 0.985 * 0.96); });
  EXPECT_EQ(v[2].signals[0].baseline, frozen);  // a fault is never learned
  EXPECT_EQ(v[2].state, HealthState::Degraded);
}

// A few seconds of HW power brake on one GPU pull its window's mean clock down; its samples without the reason
// bit are at the peers' clock, so it is not a straggler (and the brake's own rule wants more than half of two
// windows).
TEST(DetectorPeer, AThrottleBlipItsReasonBitExplainsIsNotPeerSlow) {
  Detector d;
  auto v = run(d, 12, [](auto& ws, int r) {
    if (r == 8) {  // 6 s of 30 braked at -30 %: the window's mean is 6 % low
      ws[3].sm_clock_mhz = test::flat(1980 * 0.93 * (1 - 0.3 * 0.2));
      ws[3].sm_clock_unthrottled_mhz = test::flat(1980 * 0.93);
      ws[3].sm_clock_unthrottled_mhz->samples = 24;
      ws[3].power_brake_fraction = 0.2;
    }
  });
  EXPECT_EQ(v[3].state, HealthState::Ok) << v[3].evidence;
  // The same window without the bit is a straggler's.
  Detector plain;
  auto p = run(plain, 9, [](auto& ws, int r) {
    if (r == 8) ws[3].sm_clock_mhz = test::flat(1980 * 0.93 * (1 - 0.3 * 0.2));
  });
  EXPECT_TRUE(p[3].flagged_now.has(Reason::PeerSlow));
}

TEST(DetectorPeer, AStragglerIsFlaggedThoughItsWindowsHaveBlips) {
  Detector d;
  auto v = run(d, 12, [](auto& ws, int r) {
    if (r < 6) return;
    ws[3].sm_clock_mhz = test::flat(1980 * 0.93 * 0.95 * 0.94);
    ws[3].sm_clock_unthrottled_mhz = test::flat(1980 * 0.93 * 0.95);  // slow without the brake too
    ws[3].sm_clock_unthrottled_mhz->samples = 24;
    ws[3].power_brake_fraction = 0.2;
  });
  EXPECT_TRUE(v[3].reasons.has(Reason::PeerSlow));
  EXPECT_EQ(v[3].state, HealthState::Degraded);
  EXPECT_NEAR(v[3].signals[0].deviation, -0.05, 0.002);
  EXPECT_NE(v[3].evidence.find("the 24 samples without a HW throttle reason"), std::string::npos) << v[3].evidence;
}

// Throttled in nearly every sample: the clock is the throttle rule's to judge; peer_slow is held, not flagged.
TEST(DetectorPeer, AWindowThrottledThroughoutIsNotJudgedByItsClock) {
  Detector d;
  auto v = run(d, 10, [](auto& ws, int r) {
    if (r < 6) return;
    ws[3].sm_clock_mhz = test::flat(1980 * 0.5);
    ws[3].hw_slowdown_fraction = 1.0;
  });
  EXPECT_FALSE(v[3].reasons.has(Reason::PeerSlow)) << v[3].evidence;
  EXPECT_TRUE(v[3].reasons.has(Reason::HwSlowdown));
  EXPECT_FALSE(v[3].signals[0].evaluated);
  EXPECT_EQ(v[0].peers, 6);
}

}  // namespace
}  // namespace gcm::detector
