// The absolute rules, one by one, on a single window.
#include <gtest/gtest.h>

#include "detector/absolute_rules.h"
#include "detector/busy.h"
#include "detector_test_windows.h"

namespace gcm::detector {
namespace {

ReasonSet judge(const GpuWindow& w, int windows = 2) {
  DetectorConfig c;
  ThrottleSpan span;
  for (int i = 0; i < windows; ++i) span.push(w, c.throttle_span_windows);
  return absolute_reasons(w, is_busy(w, c), span, -1, c).reasons;
}

TEST(DetectorRules, AHealthyBusyGpuFlagsNothing) { EXPECT_TRUE(judge(test::busy_window(0)).empty()); }

TEST(DetectorRules, ThrottleReasonsFlagAboveHalfOfTheSpan) {
  auto w = test::busy_window(0);
  w.hw_slowdown_fraction = 1;
  w.hw_thermal_fraction = 0.6;
  w.power_brake_fraction = 0.5;  // exactly half: not above
  ReasonSet r = judge(w);
  EXPECT_TRUE(r.has(Reason::HwSlowdown));
  EXPECT_TRUE(r.has(Reason::HwThermal));
  EXPECT_FALSE(r.has(Reason::PowerBrake));
}

TEST(DetectorRules, ABlipShorterThanAWindowNeverFlagsWhateverItsAlignment) {
  DetectorConfig c;
  ThrottleSpan span;
  auto clean = test::busy_window(0);
  auto blip = clean;
  blip.power_brake_fraction = 29.0 / 30;  // 29 s in one window, after a clean one
  span.push(clean, c.throttle_span_windows);
  span.push(blip, c.throttle_span_windows);
  EXPECT_FALSE(absolute_reasons(blip, true, span, -1, c).reasons.has(Reason::PowerBrake));
  span.push(clean, c.throttle_span_windows);
  EXPECT_FALSE(absolute_reasons(clean, true, span, -1, c).reasons.has(Reason::PowerBrake));
}

TEST(DetectorRules, PcieBelowMaxFlagsOnlyWhileBusy) {
  auto w = test::busy_window(0);
  w.pcie_width = 8;
  EXPECT_TRUE(judge(w).has(Reason::PcieDegraded));
  w.pcie_width = 16;
  w.pcie_gen = 3;
  EXPECT_TRUE(judge(w).has(Reason::PcieDegraded));
  w.gpu_util_percent = test::flat(0);  // idle links train down on purpose
  w.pcie_gen = 1;
  EXPECT_FALSE(judge(w).has(Reason::PcieDegraded));
}

TEST(DetectorRules, PcieReplaysAboveEightPerMinute) {
  auto w = test::busy_window(0);
  w.pcie_replays = 4;  // 8 per minute over 30 s: at the bound
  EXPECT_FALSE(judge(w).has(Reason::PcieReplays));
  w.pcie_replays = 5;
  EXPECT_TRUE(judge(w).has(Reason::PcieReplays));
}

TEST(DetectorRules, NvlinkCrcAboveTheRateAndAnyRecovery) {
  auto w = test::busy_window(0);
  w.nvlink_crc_errors = 3000;  // 100/s over 30 s: at the bound
  EXPECT_FALSE(judge(w).has(Reason::NvlinkErrors));
  w.nvlink_crc_errors = 6000;  // 200/s
  EXPECT_TRUE(judge(w).has(Reason::NvlinkErrors));
  w.nvlink_crc_errors = 0;
  w.nvlink_recovery_errors = 1;
  EXPECT_TRUE(judge(w).has(Reason::NvlinkErrors));
}

TEST(DetectorRules, EccAndRowRemapping) {
  auto w = test::busy_window(0);
  w.ecc_uncorrected_volatile = 1;
  w.remapped_rows_pending = 1;
  w.remapped_rows_failure = 1;
  ReasonSet r = judge(w);
  EXPECT_TRUE(r.has(Reason::EccDbe));
  EXPECT_TRUE(r.has(Reason::RowRemapPending));
  EXPECT_TRUE(r.has(Reason::RowRemapFailure));
}

TEST(DetectorRules, XidsByTheirCatalogueAction) {
  DetectorConfig c;
  ThrottleSpan span;
  auto w = test::busy_window(0);
  w.xids = {{63, "IGNORE", false}};
  EXPECT_TRUE(absolute_reasons(w, true, span, -1, c).reasons.empty());
  w.xids = {{13, "RESTART_APP", false}};
  auto soft = absolute_reasons(w, true, span, -1, c);
  EXPECT_TRUE(soft.reasons.has(Reason::Xid));
  EXPECT_FALSE(soft.xid_needs_reset);
  w.xids = {{79, "RESTART_BM", true}};
  EXPECT_TRUE(absolute_reasons(w, true, span, -1, c).xid_needs_reset);
}

TEST(DetectorRules, LostAndNotResponding) {
  auto w = test::busy_window(0);
  w.presence = Presence::Lost;
  EXPECT_TRUE(judge(w).has(Reason::Lost));
  w.presence = Presence::NotResponding;
  EXPECT_TRUE(judge(w).has(Reason::NotResponding));
}

TEST(DetectorRules, ReasonNamesAreTheContractVocabulary) {
  EXPECT_EQ(kReasonCount, 16);
  ReasonSet all;
  for (int i = 0; i < kReasonCount; ++i) all.add(static_cast<Reason>(i));
  EXPECT_EQ(all.to_string(),
            "peer_slow,hw_slowdown,hw_thermal,power_brake,pcie_degraded,pcie_replays,nvlink_errors,ecc_dbe,"
            "row_remap_pending,row_remap_failure,xid,lost,not_responding,pcie_aer,nvlink_down,rank_slow");
  EXPECT_EQ(parse_reason("ecc_dbe"), Reason::EccDbe);
  EXPECT_EQ(parse_reason("nvlink_down"), Reason::NvlinkDown);
  EXPECT_FALSE(parse_reason("bogus"));
  // The node's vocabulary: the same contract, its own names; peer_slow_node is the cross-node rules'.
  std::string nodes;
  for (int i = 0; i < kNodeReasonCount; ++i) nodes += std::string(i ? "," : "") + node_reason_name(static_cast<NodeReason>(i));
  EXPECT_EQ(nodes, "sxid_fatal,pcie_aer,mce_uncorrected,ib_link_down,fabric_manager");
  EXPECT_EQ(parse_node_reason("fabric_manager"), NodeReason::FabricManager);
  EXPECT_FALSE(parse_node_reason("peer_slow_node"));
}

// A link that went down counts no error: only fewer active links than the GPU had says it.
TEST(DetectorRules, AnNvlinkThatWentInactiveIsNvlinkDown) {
  DetectorConfig c;
  ThrottleSpan span;
  auto w = test::busy_window(0);
  w.nvlink_links_active = 18;
  EXPECT_FALSE(absolute_reasons(w, true, span, 18, c).reasons.has(Reason::NvlinkDown));
  EXPECT_FALSE(absolute_reasons(w, true, span, -1, c).reasons.has(Reason::NvlinkDown)) << "nothing known yet";
  w.nvlink_links_active = 17;
  EXPECT_TRUE(absolute_reasons(w, true, span, 18, c).reasons.has(Reason::NvlinkDown));
  EXPECT_TRUE(absolute_reasons(w, false, span, 18, c).reasons.has(Reason::NvlinkDown)) << "idle or busy alike";
  w.nvlink_links_active.reset();
  EXPECT_FALSE(absolute_reasons(w, true, span, 18, c).reasons.has(Reason::NvlinkDown)) << "no answer: no verdict";
}

TEST(DetectorRules, PcieAerErrorsOnTheGpusAddress) {
  DetectorConfig c;
  ThrottleSpan span;
  auto w = test::busy_window(0);
  EXPECT_FALSE(absolute_reasons(w, true, span, -1, c).reasons.has(Reason::PcieAer));
  w.pcie_aer_non_fatal = 1;
  auto soft = absolute_reasons(w, true, span, -1, c);
  EXPECT_TRUE(soft.reasons.has(Reason::PcieAer));
  EXPECT_FALSE(soft.aer_fatal);
  w.pcie_aer_fatal = 1;
  EXPECT_TRUE(absolute_reasons(w, true, span, -1, c).aer_fatal);
}

}  // namespace
}  // namespace gcm::detector
