#include "agent/node_health.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "health/kernel_event.h"

namespace gcm::agent {
namespace {

health::KernelEvent line(const std::string& message) {
  auto e = health::classify_kernel_event(message);
  EXPECT_TRUE(e) << message;
  return e.value_or(health::KernelEvent{});
}

std::map<std::string, Health> states(NodeHealth& h, double now) {
  std::map<std::string, Health> out;
  for (const auto& e : h.active(now)) out[e.reason] = e.health;
  return out;
}

TEST(NodeHealth, AFatalSxidAndAnUncorrectedMachineCheckFailTheNodeUntilItReboots) {
  NodeHealth h(600);
  h.add_kernel_event(line("nvidia-nvswitch1: SXid (PCI:0000:a6:00.0): 12028, Non-fatal, Link 08 egress error"), 10);
  h.add_kernel_event(line("mce: [Hardware Error]: Machine check events logged"), 11);
  EXPECT_TRUE(h.active(12).empty()) << "the catalogue's warnings are counted, not reasons";
  h.add_kernel_event(line("nvidia-nvswitch1: SXid (PCI:0000:a6:00.0): 20034, Fatal, Link 08 LTSSM Fault Up"), 20);
  h.add_kernel_event(line("mce: [Hardware Error]: CPU 20: Machine Check: 0 Bank 1: bd80000000100134"), 21);
  auto active = h.active(30);
  ASSERT_EQ(active.size(), 2u);
  EXPECT_EQ(active[0].reason, "sxid_fatal");
  EXPECT_EQ(active[0].health, Health::Failed);
  EXPECT_EQ(active[0].since_unix_ms, 20000);
  EXPECT_NE(active[0].evidence.find("sxid fatal on 0000:a6:00.0"), std::string::npos) << active[0].evidence;
  EXPECT_EQ(active[1].reason, "mce_uncorrected");
  EXPECT_EQ(active[1].health, Health::Failed);
  EXPECT_NE(active[1].evidence.find("on cpu20"), std::string::npos) << active[1].evidence;
  // A day later, nothing cleared them: only a reboot (a new kernel log) does.
  EXPECT_EQ(h.active(30 + 86400).size(), 2u);
}

TEST(NodeHealth, AnInfinibandPortDownDegradesTheNodeUntilThatPortIsUpAgain) {
  NodeHealth h(600);
  h.add_kernel_event(line("ixgbe 0000:01:00.0 eth2: NIC Link is Down"), 5);
  EXPECT_TRUE(h.active(6).empty()) << "an Ethernet link is not a reason";
  h.add_kernel_event(line("mlx5_core 0000:18:00.0 ib1: Lost carrier"), 10);
  h.add_kernel_event(line("mlx5_core 0000:19:00.0 ib2: Lost carrier"), 11);
  EXPECT_EQ(states(h, 12), (std::map<std::string, Health>{{"ib_link_down", Health::Degraded}}));
  h.add_kernel_event(line("IPv6: ADDRCONF(NETDEV_CHANGE): ib1: link becomes ready"), 20);
  auto active = h.active(21);
  ASSERT_EQ(active.size(), 1u) << "ib2 is still down";
  EXPECT_NE(active[0].evidence.find("ib2"), std::string::npos) << active[0].evidence;
  h.add_kernel_event(line("IPv6: ADDRCONF(NETDEV_CHANGE): ib2: link becomes ready"), 30);
  EXPECT_TRUE(h.active(31).empty());
}

TEST(NodeHealth, AerErrorsAreQueuedForTheAgentAndANodeOnesClearsByItsRule) {
  NodeHealth h(600);
  h.add_kernel_event(line("nvidia 0000:3b:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)"),
                     1);
  h.add_kernel_event(
      line("nvidia 0000:11:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester "
           "ID)"),
      2);
  auto aer = h.take_aer();
  ASSERT_EQ(aer.size(), 1u) << "a corrected error is not routed";
  EXPECT_EQ(aer[0].device, "0000:11:00.0");
  EXPECT_FALSE(aer[0].fatal);
  EXPECT_TRUE(h.take_aer().empty());
  EXPECT_TRUE(h.active(3).empty()) << "until the agent says it is none of its GPUs'";
  h.add_node_aer(aer[0]);
  EXPECT_EQ(states(h, 3), (std::map<std::string, Health>{{"pcie_aer", Health::Degraded}}));
  EXPECT_EQ(states(h, 2 + 600).size(), 1u);
  EXPECT_TRUE(h.active(2 + 601).empty()) << "a non-fatal error clears after the hold";
  h.add_node_aer({"0000:01:00.0", true, 700, 1});
  EXPECT_EQ(states(h, 701), (std::map<std::string, Health>{{"pcie_aer", Health::Failed}}));
  EXPECT_EQ(states(h, 700 + 86400).size(), 1u) << "a fatal one holds until the node reboots";
}

TEST(NodeHealth, AnAerStormIsOneEntryPerDeviceAndTheQueueIsBounded) {
  NodeHealth h;
  for (int i = 0; i < 5000; ++i)
    h.add_kernel_event(line("nvidia 0000:11:00.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction "
                            "Layer, (Requester ID)"),
                       i);
  for (int i = 0; i < 1000; ++i)
    h.add_kernel_event(line(fmt::format("pcieport 0000:{:02x}:{:02x}.0: PCIe Bus Error: severity=Uncorrectable "
                                        "(Fatal), type=Inaccessible, (Unregistered Agent ID)",
                                        i / 256, i % 256)),
                       6000);
  auto aer = h.take_aer();
  ASSERT_EQ(aer.size(), 257u) << "256 entries and 'other'";
  int total = 0;
  for (const auto& e : aer) total += e.count;
  EXPECT_EQ(total, 6000) << "nothing lost";
  bool storm = false, other = false;
  for (const auto& e : aer) {
    storm |= e.device == "0000:11:00.0" && !e.fatal && e.count == 5000;
    other |= e.device == "other" && e.fatal;
  }
  EXPECT_TRUE(storm);
  EXPECT_TRUE(other);
}

TEST(NodeHealth, TheFabricManagerReasonHoldsWhileItIsNotRunning) {
  NodeHealth h;
  h.set_fabric_manager("NVSwitch system and nvidia-fabricmanager.service is inactive", 1);
  auto active = h.active(2);
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].reason, "fabric_manager");
  EXPECT_EQ(active[0].health, Health::Degraded);
  h.set_fabric_manager("", 3);
  EXPECT_TRUE(h.active(4).empty());
}

TEST(NodeHealth, EveryReasonOfTheVocabularyIsASeriesZeroWhenItDoesNotHold) {
  std::vector<Record> out;
  NodeHealth::append_metrics({{"mce_uncorrected", Health::Failed, "x", 0}}, out);
  ASSERT_EQ(out.size(), static_cast<size_t>(detector::kNodeReasonCount));
  for (const auto& r : out) {
    std::string reason = r[0].as_string();
    EXPECT_EQ(r[1].as_int(), reason == "mce_uncorrected" ? 3 : 0) << reason;
  }
}

}  // namespace
}  // namespace gcm::agent
