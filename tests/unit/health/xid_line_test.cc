// The XID line parser and the scanner that gathers a kernel log's XIDs and SXids.
#include "health/xid_line.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "health/kernel_log.h"

namespace gcm::health {
namespace {

const std::string kLogs = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health/kernel-log/";

std::vector<XidFinding> scan_file(const std::string& name) {
  XidScanner s;
  scan_kernel_log(kLogs + name, [&](const KernelLogLine& l) { s.feed(l.message); });
  return s.findings();
}

TEST(XidLine, ParsesTheDriverForms) {
  auto x = parse_xid_line("NVRM: Xid (PCI:0000:b7:00): 74, pid='<unknown>', NVLink: fatal error on link 14");
  ASSERT_TRUE(x && x->code);
  EXPECT_EQ(*x->code, 74);
  EXPECT_EQ(x->kind, XidKind::Xid);
  EXPECT_EQ(x->device, "PCI:0000:b7:00");
  EXPECT_EQ(x->detail, "pid='<unknown>', NVLink: fatal error on link 14");
  auto s = parse_xid_line("nvidia-nvswitch3: SXid (PCI:0000:c5:00.0): 20034, Fatal, Link 45 LTSSM Fault Up");
  ASSERT_TRUE(s && s->code);
  EXPECT_EQ(s->kind, XidKind::SXid);
  EXPECT_EQ(*s->code, 20034);
  EXPECT_TRUE(s->fatal_hint);
  auto nf = parse_xid_line("nvidia-nvswitch3: SXid (PCI:0000:c5:00.0): 12028, Non-fatal, Link 32");
  ASSERT_TRUE(nf);
  EXPECT_FALSE(nf->fatal_hint);
  // grep NVRM:.Xid selects it, the number cannot be read: the reference's XID None.
  auto bad = parse_xid_line("NVRM: Xid (PCI:0000:b7:00): abc");
  ASSERT_TRUE(bad);
  EXPECT_FALSE(bad->code);
  auto other = parse_xid_line("NVRM:_Xid something");
  ASSERT_TRUE(other);
  EXPECT_FALSE(other->code);
  EXPECT_FALSE(parse_xid_line("NVRM: loading NVIDIA UNIX x86_64 Kernel Module"));
  EXPECT_FALSE(parse_xid_line("SXid is a word here"));
  auto bus = parse_xid_line("NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.");
  ASSERT_TRUE(bus && bus->code);
  EXPECT_EQ(*bus->code, kXidFallenOffTheBus);
  EXPECT_EQ(bus->device, "0000:3b:00.0");
}

TEST(XidScanner, EachXidOnceWithCountsAndDevices) {
  auto f = scan_file("xid-kmsg.txt");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(*f[0].code, 31);
  EXPECT_EQ(f[0].count, 2);
  EXPECT_EQ(f[0].devices, std::vector<std::string>{"PCI:0000:0d:00"});
  EXPECT_EQ(*f[1].code, 48);
  EXPECT_EQ(f[1].count, 2);
  EXPECT_EQ(f[1].devices, (std::vector<std::string>{"PCI:0000:0d:00", "PCI:0000:4e:00"}));
}

TEST(XidScanner, NvlinkSxidAndMultiLineFallenOffTheBus) {
  auto f = scan_file("xid-dmesg-forms.txt");
  ASSERT_EQ(f.size(), 6u);
  EXPECT_EQ(*f[0].code, 31);
  EXPECT_EQ(*f[1].code, 74);
  EXPECT_EQ(f[2].kind, XidKind::SXid);
  EXPECT_EQ(*f[2].code, 12028);
  EXPECT_FALSE(f[2].fatal_hint);
  EXPECT_EQ(*f[3].code, 20034);
  EXPECT_TRUE(f[3].fatal_hint);
  EXPECT_EQ(f[4].kind, XidKind::Xid);
  EXPECT_EQ(*f[4].code, 79);
  EXPECT_EQ(f[4].devices, std::vector<std::string>{"0000:3b:00.0"});  // named on the message's first line
  EXPECT_EQ(*f[5].code, 63);
}

TEST(XidScanner, CleanLogHasNoFinding) { EXPECT_TRUE(scan_file("clean-dmesg.txt").empty()); }

}  // namespace
}  // namespace gcm::health
