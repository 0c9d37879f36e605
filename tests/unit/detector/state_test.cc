// The persistence state machine: suspect after one flagged window, degraded after k of n, failed at once for hard
// faults, cleared after m clean windows; held (neither flagged nor clean) when a reason cannot be judged.
#include <gtest/gtest.h>

#include "detector/detector.h"
#include "detector/persistence.h"
#include "detector_test_windows.h"

namespace gcm::detector {
namespace {

Persistence::Input flagged(Reason r, bool fatal = false) {
  Persistence::Input in;
  in.flagged.add(r);
  if (fatal) in.fatal.add(r);
  return in;
}

TEST(DetectorState, SuspectThenDegradedAfterKOfNThenClearedAfterMCleanWindows) {
  DetectorConfig c;
  Persistence p;
  EXPECT_EQ(p.update(flagged(Reason::PeerSlow), c), HealthState::Suspect);
  EXPECT_EQ(p.update({}, c), HealthState::Suspect);
  EXPECT_EQ(p.update(flagged(Reason::PeerSlow), c), HealthState::Suspect);
  EXPECT_EQ(p.update(flagged(Reason::PeerSlow), c), HealthState::Degraded);  // 3 of the last 4 <= 5
  for (int i = 0; i < c.clear_windows - 1; ++i) EXPECT_EQ(p.update({}, c), HealthState::Degraded) << i;
  EXPECT_EQ(p.update({}, c), HealthState::Ok);
  EXPECT_TRUE(p.active().empty());
}

TEST(DetectorState, TwoFlaggedWindowsInFiveOnlySuspect) {
  DetectorConfig c;
  Persistence p;
  for (int i = 0; i < 20; ++i) {
    auto s = p.update(i % 3 == 0 ? flagged(Reason::PeerSlow) : Persistence::Input{}, c);
    EXPECT_LE(s, HealthState::Suspect) << i;
  }
}

TEST(DetectorState, HardFaultsFailAtOnceAndClearSlowly) {
  DetectorConfig c;
  for (Reason r : {Reason::Lost, Reason::EccDbe, Reason::RowRemapFailure, Reason::Xid}) {
    Persistence p;
    EXPECT_EQ(p.update(flagged(r, true), c), HealthState::Failed) << reason_name(r);
    for (int i = 0; i < c.failed_clear_windows - 1; ++i) p.update({}, c);
    EXPECT_EQ(p.state(), HealthState::Failed);
    EXPECT_EQ(p.update({}, c), HealthState::Ok);
  }
  Persistence p;
  EXPECT_EQ(p.update(flagged(Reason::RowRemapPending), c), HealthState::Degraded);  // needs a reset: drainable
}

TEST(DetectorState, AHeldReasonNeitherFlagsNorClears) {
  DetectorConfig c;
  Persistence p;
  for (int i = 0; i < 3; ++i) p.update(flagged(Reason::PeerSlow), c);
  ASSERT_EQ(p.state(), HealthState::Degraded);
  Persistence::Input held;
  held.held.add(Reason::PeerSlow);
  for (int i = 0; i < 100; ++i) p.update(held, c);  // the job ended: the GPU cannot be compared
  EXPECT_EQ(p.state(), HealthState::Degraded);
}

TEST(DetectorState, EachStateChangeIsAnEventWithEvidence) {
  Detector d;
  std::vector<HealthEvent> events;
  for (int r = 0; r < 30; ++r) {
    auto ws = test::busy_node();
    if (r >= 6 && r < 12) ws[3].sm_clock_mhz = test::flat(1980 * 0.93 * 0.9);
    for (const auto& v : d.observe(ws)) {
      if (v.event) events.push_back(*v.event);
    }
  }
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].to, HealthState::Suspect);
  EXPECT_EQ(events[1].to, HealthState::Degraded);
  EXPECT_EQ(events[1].flagged_windows, 3);
  EXPECT_EQ(events[1].peers, 7);
  EXPECT_NE(events[1].evidence.find("deviation -10.0%"), std::string::npos) << events[1].evidence;
  EXPECT_EQ(events[2].to, HealthState::Ok);
}

TEST(DetectorState, XidThatNeedsAResetFailsTheGpu) {
  Detector d;
  auto ws = test::busy_node();
  ws[2].xids = {{79, "RESTART_BM", true}};
  auto v = d.observe(ws);
  EXPECT_EQ(v[2].state, HealthState::Failed);
  EXPECT_TRUE(v[2].reasons.has(Reason::Xid));
  ASSERT_TRUE(v[2].event);
  EXPECT_NE(v[2].event->evidence.find("79(RESTART_BM,critical)"), std::string::npos) << v[2].event->evidence;
}

// An NVLink that goes inactive degrades the GPU at once, idle or busy, and clears 10 windows after it is back.
TEST(DetectorState, AnNvlinkDownDegradesAtOnceAndClearsWhenTheLinkIsBack) {
  Detector d;
  std::vector<GpuVerdict> v;
  auto round = [&](int active, bool busy) {
    auto ws = test::busy_node();
    for (auto& w : ws) {
      w.nvlink_links_active = 18;
      if (!busy) w.gpu_util_percent = test::flat(0);
    }
    ws[2].nvlink_links_active = active;
    v = d.observe(ws);
  };
  round(18, true);
  EXPECT_EQ(v[2].state, HealthState::Ok);
  round(17, false);
  EXPECT_EQ(v[2].state, HealthState::Degraded);
  EXPECT_TRUE(v[2].reasons.has(Reason::NvlinkDown));
  EXPECT_NE(v[2].evidence.find("nvlink_down: 17 of the 18 NVLinks it had are active"), std::string::npos)
      << v[2].evidence;
  for (int i = 0; i < 9; ++i) round(18, true);
  EXPECT_EQ(v[2].state, HealthState::Degraded) << "9 clean windows";
  round(18, true);
  EXPECT_EQ(v[2].state, HealthState::Ok);
  EXPECT_EQ(v[0].state, HealthState::Ok);
}

TEST(DetectorState, AFatalPcieAerErrorFailsTheGpuANonFatalOneDegradesItAtOnce) {
  Detector d;
  auto ws = test::busy_node();
  ws[1].pcie_aer_non_fatal = 1;
  ws[2].pcie_aer_fatal = 1;
  auto v = d.observe(ws);
  EXPECT_EQ(v[1].state, HealthState::Degraded) << "critical in the catalogue: the prolog refuses the next job";
  EXPECT_EQ(v[2].state, HealthState::Failed);
  EXPECT_EQ(v[0].state, HealthState::Ok);
  EXPECT_TRUE(v[2].reasons.has(Reason::PcieAer));
  EXPECT_NE(v[2].evidence.find("pcie_aer: 1 fatal, 0 non-fatal"), std::string::npos) << v[2].evidence;
}

}  // namespace
}  // namespace gcm::detector
