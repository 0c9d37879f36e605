// The kernel log's hardware events other than GPU XIDs: link flaps, machine checks, PCIe AER and NVSwitch SXids,
// on the recorded logs of tests/fixtures/health (the kernel's own line formats) and on the lines that look like
// them but are none.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/file_lines.h"
#include "health/kernel_event.h"
#include "health/kernel_log.h"
#include "health/link_flap_line.h"
#include "health/mce_line.h"
#include "health/pcie_aer_line.h"

namespace gcm::health {
namespace {

const std::string kFixtures = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health/";

// "kind/class/device" of every event of a kernel log, in order.
std::vector<std::string> events_of(const std::string& log) {
  std::vector<std::string> out;
  scan_kernel_log(kFixtures + log, [&](const KernelLogLine& l) {
    if (auto e = classify_kernel_event(l.message))
      out.push_back(std::string(to_string(e->info->kind)) + "/" + e->info->cls + "/" + e->device);
  });
  return out;
}

TEST(KernelEvent, ClassifiesEveryHardwareEventOfTheKmsgFixtureOnce) {
  // Each error once, though the kernel prints it over several lines (an MCE's TSC and PROCESSOR lines, an AER
  // error's root-port, status and bit lines); the GPU XID is the XID tracker's, and a PCIe slot's "Link Down" and
  // "temperature/speed normal" are no event.
  EXPECT_EQ(events_of("kernel-log/hw-events-kmsg.txt"), (std::vector<std::string>{
                                                            "link_up/infiniband/ib0",
                                                            "link_down/ethernet/ens1f0np0",
                                                            "link_up/ethernet/ens1f0np0",
                                                            "link_down/ethernet/eth2",
                                                            "link_up/ethernet/eth2",
                                                            "link_down/infiniband/ib1",
                                                            "mce/logged/",
                                                            "mce/corrected/cpu3",
                                                            "mce/uncorrected/cpu20",
                                                            "mce/fatal/cpu0",
                                                            "mce/thermal/cpu12",
                                                            "mce/thermal/cpu12",
                                                            "pcie_aer/corrected/0000:3b:00.0",
                                                            "pcie_aer/non_fatal/0000:01:00.0",
                                                            "pcie_aer/fatal/0000:01:00.0",
                                                            "sxid/fatal/0000:a6:00.0",
                                                            "sxid/non_fatal/0000:a6:00.0",
                                                        }));
}

TEST(KernelEvent, SxidsOfTheDmesgFixtureWithTheirSwitchAndCode) {
  std::vector<KernelEvent> sx;
  scan_kernel_log(kFixtures + "kernel-log/xid-dmesg-forms.txt", [&](const KernelLogLine& l) {
    if (auto e = classify_kernel_event(l.message)) sx.push_back(*e);
  });
  ASSERT_EQ(sx.size(), 2u) << "the GPU XIDs of the same log are no kernel event";
  EXPECT_STREQ(sx[0].info->cls, "non_fatal");
  EXPECT_EQ(sx[0].code, 12028);
  EXPECT_EQ(sx[0].nvswitch, 3);
  EXPECT_EQ(sx[0].device, "0000:c5:00.0");
  EXPECT_EQ(sx[0].info->severity, XidSeverity::Warn);
  EXPECT_STREQ(sx[1].info->cls, "fatal");
  EXPECT_EQ(sx[1].code, 20034);
  EXPECT_EQ(sx[1].info->severity, XidSeverity::Critical);
  EXPECT_NE(sx[1].detail.find("LTSSM Fault Up"), std::string::npos);
  // The follower's path: the line parse_xid_line read already.
  std::string msg = "nvidia-nvswitch12: SXid (PCI:0000:C5:00.0): 20034, Fatal, Link 45 LTSSM Fault Up";
  auto x = parse_xid_line(msg);
  ASSERT_TRUE(x);
  auto e = sxid_event(*x, msg);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->nvswitch, 12);
  EXPECT_EQ(e->device, "0000:c5:00.0");
  auto gpu = parse_xid_line("NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.");
  ASSERT_TRUE(gpu);
  EXPECT_FALSE(sxid_event(*gpu, "NVRM: Xid (PCI:0000:3b:00): 79"));
}

TEST(KernelEvent, LinkFlapsOfTheSyslogFixtures) {
  std::vector<std::string> seen;
  for (const char* f : {"syslog/link-flaps.log", "syslog/eth-flap.log", "syslog/quiet.log"})
    for_each_file_line(kFixtures + f, [&](std::string_view line) {
      if (auto l = parse_link_flap_line(line))
        seen.push_back(std::string(l->change == LinkChange::Down ? "down " : "up ") + to_string(l->kind) + " " +
                       l->interface + (l->lost_carrier ? " lost-carrier" : ""));
    });
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "down ethernet eth0 lost-carrier",
                      "up ethernet eth0",
                      "down infiniband ib1 lost-carrier",
                      "down infiniband ib1 lost-carrier",
                      "down infiniband ib3 lost-carrier",
                      "down ethernet eth0 lost-carrier",
                  }));
}

TEST(LinkFlapLine, DriverFormsAndLinesThatAreNoFlap) {
  auto igb = parse_link_flap_line("igb 0000:01:00.0 eno1: igb: eno1 NIC Link is Up 1000 Mbps Full Duplex");
  ASSERT_TRUE(igb);
  EXPECT_EQ(igb->interface, "eno1");
  EXPECT_EQ(igb->change, LinkChange::Up);
  auto tg3 = parse_link_flap_line("tg3 0000:01:00.0 eth0: Link is down");
  ASSERT_TRUE(tg3);
  EXPECT_EQ(tg3->change, LinkChange::Down);
  EXPECT_FALSE(tg3->lost_carrier);
  auto ipoib = parse_link_flap_line("mlx5_core 0000:17:00.0 ibp23s0: Link down");
  ASSERT_TRUE(ipoib);
  EXPECT_EQ(ipoib->kind, LinkKind::InfiniBand);
  EXPECT_FALSE(parse_link_flap_line("pcieport 0000:00:1c.0: pciehp: Slot(1): Link Down"));
  EXPECT_FALSE(parse_link_flap_line("eth0: Link upgrade scheduled"));
  EXPECT_FALSE(parse_link_flap_line("ACPI: PCI Interrupt Link [LNKA] (IRQs 5 *10 11)"));
  EXPECT_FALSE(parse_link_flap_line(""));
  // GCM's rule for the link-flaps check: by what the line mentions, not by the interface.
  EXPECT_EQ(gcm_link_flap_kind("node-lib1 systemd-networkd: eth0: Lost carrier"), LinkKind::InfiniBand);
  EXPECT_EQ(gcm_link_flap_kind("systemd-networkd: eth0: Lost carrier"), LinkKind::Ethernet);
  EXPECT_FALSE(gcm_link_flap_kind("systemd-networkd: enp1s0: Lost carrier"));
}

TEST(MceLine, StatusBitsGiveTheClass) {
  EXPECT_EQ(mce_status_class(0xcc00008000010091ULL), MceClass::Corrected);    // VAL OVER MISCV ADDRV
  EXPECT_EQ(mce_status_class(0xbd80000000100134ULL), MceClass::Uncorrected);  // UC, no PCC
  EXPECT_EQ(mce_status_class(0xbe00000000800400ULL), MceClass::Fatal);        // UC and PCC
  auto m = parse_mce_line("mce: [Hardware Error]: CPU 20: Machine Check: 0 Bank 1: bd80000000100134");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->cpu, 20);
  EXPECT_EQ(m->bank, 1);
  EXPECT_EQ(m->status, 0xbd80000000100134ULL);
  auto newer = parse_mce_line("CPU3: Core temperature is above threshold, cpu clock is throttled (total events = 9)");
  ASSERT_TRUE(newer);
  EXPECT_EQ(newer->cls, MceClass::Thermal);
  EXPECT_EQ(newer->cpu, 3);
  EXPECT_TRUE(parse_mce_line("mce: CMCI storm detected: switching to poll mode"));
  // A bank line cut short, and the lines around a bank line, are no event.
  EXPECT_FALSE(parse_mce_line("mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 7: "));
  EXPECT_FALSE(parse_mce_line("mce: [Hardware Error]: CPU 3: Machine Check: zz Bank 7: cc00"));
  EXPECT_FALSE(parse_mce_line("mce: [Hardware Error]: TSC 0 ADDR 1f7a4c000 MISC 90840400000108c"));
  EXPECT_FALSE(parse_mce_line("mce: CPU12: Core temperature/speed normal"));
}

TEST(PcieAerLine, SeveritiesOfOldAndNewKernelsAndTheDevice) {
  auto old = parse_pcie_aer_line(
      "pcieport 0000:00:03.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, id=0018(Receiver ID)");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->cls, AerClass::Corrected);
  EXPECT_EQ(old->device, "0000:00:03.0");
  EXPECT_EQ(old->type, "Physical Layer");
  auto nf = parse_pcie_aer_line(
      "nvidia 0000:01:00.0: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), type=Transaction Layer, "
      "(Requester ID)");
  ASSERT_TRUE(nf);
  EXPECT_EQ(nf->cls, AerClass::NonFatal);
  EXPECT_FALSE(parse_pcie_aer_line("nvidia 0000:01:00.0: PCIe Bus Error: severity=Unknown"));
  EXPECT_FALSE(parse_pcie_aer_line("pcieport 0000:00:01.0: AER: Corrected error received: 0000:3b:00.0"));
  auto bare = parse_pcie_aer_line("PCIe Bus Error: severity=Uncorrected (Fatal), type=Inaccessible");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->cls, AerClass::Fatal);
  EXPECT_EQ(bare->device, "");
}

TEST(KernelEvent, EveryClassHasASeverityCauseAndActionAndIsFound) {
  std::set<std::string> seen;
  for (const auto& c : kernel_event_classes()) {
    std::string key = std::string(to_string(c.kind)) + "/" + c.cls;
    EXPECT_TRUE(seen.insert(key).second) << "twice: " << key;
    EXPECT_GT(std::string(c.cause).size(), 10u) << key;
    EXPECT_GT(std::string(c.action).size(), 3u) << key;
    EXPECT_EQ(find_kernel_event_class(c.kind, c.cls), &c) << key;
  }
  // Each class a parser can produce has its row (the parsers' vocabularies and the table agree).
  for (MceClass m : {MceClass::Corrected, MceClass::Uncorrected, MceClass::Fatal, MceClass::Logged, MceClass::Thermal})
    EXPECT_TRUE(find_kernel_event_class(KernelEventKind::Mce, to_string(m))) << to_string(m);
  for (AerClass a : {AerClass::Corrected, AerClass::NonFatal, AerClass::Fatal})
    EXPECT_TRUE(find_kernel_event_class(KernelEventKind::PcieAer, to_string(a))) << to_string(a);
  for (KernelEventKind k : {KernelEventKind::LinkDown, KernelEventKind::LinkUp})
    for (LinkKind l : {LinkKind::InfiniBand, LinkKind::Ethernet}) EXPECT_TRUE(find_kernel_event_class(k, to_string(l)));
  EXPECT_FALSE(find_kernel_event_class(KernelEventKind::Mce, "nonsense"));
  EXPECT_EQ(find_kernel_event_class(KernelEventKind::LinkDown, "infiniband")->severity, XidSeverity::Critical);
  EXPECT_EQ(find_kernel_event_class(KernelEventKind::LinkDown, "ethernet")->severity, XidSeverity::Warn);
}

TEST(KernelEvent, CleanAndIoErrorLogsHoldOnlyALinkComingUp) {
  EXPECT_EQ(events_of("kernel-log/clean-dmesg.txt"), std::vector<std::string>{"link_up/infiniband/ib0"});
  EXPECT_TRUE(events_of("kernel-log/io-errors-dmesg.txt").empty());
}

}  // namespace
}  // namespace gcm::health
