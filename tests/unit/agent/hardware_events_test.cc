// The node's hardware events between two windows: a kernel-log XID reaches its GPU's summary once, a machine check
// is counted as a kernel event, and the node reasons that change are published.
#include "agent/hardware_events.h"

#include <gtest/gtest.h>

#include "core/logging.h"
#include "health/xid_line.h"

namespace gcm::agent {
namespace {

// A kernel-log record as the follower hands it over; the XID the follower read from it, if any.
void feed(HardwareEvents& hw, std::string_view message) {
  KmsgRecord rec;
  rec.message = message;
  hw.on_kmsg(rec, health::parse_xid_line(message));
}

std::vector<detector::GpuWindow> two_windows() {
  std::vector<detector::GpuWindow> w(2);
  w[0].gpu = 0;
  w[1].gpu = 1;
  return w;
}

TEST(HardwareEvents, AKernelLogXidReachesItsGpusWindowOnce) {
  HardwareEvents hw(3600, stderr_logger("hardware-events-test"));
  hw.xids().set_gpus({{0, "GPU-aaa", "00000000:3B:00.0"}, {1, "GPU-bbb", "00000000:3C:00.0"}});
  feed(hw, "NVRM: Xid (PCI:0000:3c:00): 79, pid=1234, GPU has fallen off the bus.");
  auto w = two_windows();
  hw.add_window_xids(w);
  EXPECT_TRUE(w[0].xids.empty());
  ASSERT_EQ(w[1].xids.size(), 1u);
  EXPECT_EQ(w[1].xids[0].code, 79);
  // The next window has only what came after.
  auto next = two_windows();
  hw.add_window_xids(next);
  EXPECT_TRUE(next[1].xids.empty());
}

TEST(HardwareEvents, AMachineCheckIsAKernelEventOnThePage) {
  AgentCounters counters;
  WindowExport out(counters, stderr_logger("hardware-events-test"));
  HardwareEvents hw(3600, stderr_logger("hardware-events-test"));
  feed(hw, "mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 7: cc00008000010091");
  feed(hw, "usb 1-1: new high-speed USB device number 2 using xhci_hcd");  // not a hardware event
  hw.publish(1700000000.0, out, counters);
  out.render_page();
  EXPECT_NE(out.page().find("gcm_node_kernel_events_total{kind=\"mce\",class=\"corrected\",device=\"cpu3\"} 1"),
            std::string::npos)
      << out.page();
}

TEST(HardwareEvents, EveryNodeReasonIsASeriesAndOneThatClearsGoesBackToOk) {
  AgentCounters counters;
  WindowExport out(counters, stderr_logger("hardware-events-test"));
  HardwareEvents hw(3600, stderr_logger("hardware-events-test"));
  NodeStateEntry e;
  e.reason = "fabric_manager";
  e.health = Health::Degraded;
  e.evidence = "nvidia-fabricmanager is not running";
  hw.publish_node_health({e}, "node7", 1700000000.0, out);
  out.render_page();
  EXPECT_NE(out.page().find("gcm_node_health_state{reason=\"fabric_manager\"} 2\n"), std::string::npos) << out.page();
  EXPECT_NE(out.page().find("gcm_node_health_state{reason=\"sxid_fatal\"} 0\n"), std::string::npos) << out.page();
  hw.publish_node_health({}, "node7", 1700000060.0, out);
  out.render_page();
  EXPECT_NE(out.page().find("gcm_node_health_state{reason=\"fabric_manager\"} 0\n"), std::string::npos) << out.page();
}

// A node reason that begins, worsens and clears is one NodeHealthEvent each time, with the evidence; a window
// where it holds unchanged adds none.
TEST(HardwareEvents, EachNodeReasonChangeIsOneLogRecord) {
  AgentCounters counters;
  WindowExport out(counters, stderr_logger("hardware-events-test"));
  HardwareEvents hw(3600, stderr_logger("hardware-events-test"));
  NodeStateEntry e;
  e.reason = "ib_link_down";
  e.health = Health::Degraded;
  e.evidence = "mlx5_0 port 1 down";
  auto said = [](const std::vector<Record>& records) {
    std::vector<std::string> lines;
    for (const Record& r : records)
      lines.push_back(r.at("reason").as_string() + " " + r.at("from_state").as_string() + "->" +
                      r.at("to_state").as_string() + " " + std::to_string(r.at("time").as_int()) + " " +
                      r.at("hostname").as_string() + ": " + r.at("evidence").as_string());
    return lines;
  };
  EXPECT_EQ(said(hw.publish_node_health({e}, "node7", 1700000000.0, out)),
            (std::vector<std::string>{"ib_link_down ok->degraded 1700000000 node7: mlx5_0 port 1 down"}));
  EXPECT_TRUE(hw.publish_node_health({e}, "node7", 1700000030.0, out).empty()) << "unchanged: no record";
  e.health = Health::Failed;
  EXPECT_EQ(said(hw.publish_node_health({e}, "node7", 1700000060.0, out)),
            (std::vector<std::string>{"ib_link_down degraded->failed 1700000060 node7: mlx5_0 port 1 down"}));
  EXPECT_EQ(said(hw.publish_node_health({}, "node7", 1700000090.0, out)),
            (std::vector<std::string>{"ib_link_down failed->ok 1700000090 node7: "}));
}

}  // namespace
}  // namespace gcm::agent
