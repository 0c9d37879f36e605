// The harness's goals, as tests: 100 simulated node-days of clean, noisy data raise no degraded or failed state
// and almost no suspect state; every fault scenario is detected within 4 windows of 30 s (< 2 min).
#include <gtest/gtest.h>

#include "detector/scenario.h"

namespace gcm::detector::harness {
namespace {

TEST(DetectorHarness, HundredCleanNodeDaysRaiseNoFalseStates) {
  DetectorConfig c;
  int suspect = 0;
  double days = 0;
  for (uint64_t seed : {11, 12, 13, 14}) {  // 4 x 25 node-days, different noise and job mixes
    ScenarioResult r = run_scenario(clean_scenario(25, seed), c);
    EXPECT_EQ(r.false_degraded, 0) << seed;
    EXPECT_EQ(r.false_failed, 0) << seed;
    suspect += r.false_suspect;
    days += r.node_days;
  }
  EXPECT_GE(days, 100);
  EXPECT_LT(suspect / days, 0.005);
}

// The clean runs carry throttle blips of single GPUs (each with its reason bit): the case that made a GPU suspect
// when its window's mean clock was compared. The stream must really have them for the test above to mean it.
TEST(DetectorHarness, TheCleanStreamHasThrottleBlipsOfSingleGpus) {
  NodeSpec spec = clean_scenario(1, 11).node;
  NodeSimulator sim(spec);
  int single = 0, deep = 0;
  for (int i = 0; i < 2880; ++i) {
    int throttled = 0;
    bool low = false;
    for (const auto& w : sim.next()) {
      if (w.hw_slowdown_fraction > 0 || w.power_brake_fraction > 0) {
        ++throttled;
        low = low || (w.sm_clock_unthrottled_mhz && w.sm_clock_mhz->mean < 0.97 * w.sm_clock_unthrottled_mhz->mean);
      }
    }
    single += throttled == 1;
    deep += throttled == 1 && low;
  }
  EXPECT_GE(single, 100) << "about 8 GPU blips an hour";
  EXPECT_GE(deep, 30) << "blips that pull a window's mean more than 3 % below its unthrottled samples";
}

TEST(DetectorHarness, EveryFaultIsDetectedWithinFourWindows) {
  DetectorConfig c;
  for (const Scenario& s : fault_scenarios(3)) {
    ScenarioResult r = run_scenario(s, c);
    EXPECT_EQ(r.false_suspect + r.false_degraded + r.false_failed, 0) << s.name;
    if (!s.expect_detection) continue;
    EXPECT_GE(r.detect_windows, 1) << s.name;
    EXPECT_LE(r.detect_windows, 4) << s.name;
    EXPECT_LT(r.detect_seconds, 120) << s.name;
    EXPECT_TRUE(r.expected_reason_seen) << s.name;
  }
}

TEST(DetectorHarness, AFivePercentSlowdownIsCaughtWhateverTheNoise) {
  DetectorConfig c;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    ScenarioResult r = run_scenario(slowdown_scenario(0.05, seed), c);
    EXPECT_GE(r.detect_windows, 1) << seed;
    EXPECT_LE(r.detect_windows, 4) << seed;
  }
}

TEST(DetectorHarness, AWholeNodeSlowerIsInvisibleInsideTheNode) {
  // The central, cross-node comparison's job: inside the node it is a common-mode change.
  ScenarioResult r = run_scenario(fault_scenarios(1).back(), DetectorConfig{});
  EXPECT_EQ(r.false_suspect + r.false_degraded, 0);
}

}  // namespace
}  // namespace gcm::detector::harness
