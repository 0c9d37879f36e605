// The kernel-log reader, the XID line parser and scanner, and the XID catalogue.
#include <gtest/gtest.h>

#include <fstream>

#include "health/kernel_log.h"
#include "health/xid_catalogue.h"
#include "health/xid_line.h"

namespace gcm::health {
namespace {

const std::string kLogs = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health/kernel-log/";

std::vector<XidFinding> scan_file(const std::string& name) {
  XidScanner s;
  scan_kernel_log(kLogs + name, [&](const KernelLogLine& l) { s.feed(l.message); });
  return s.findings();
}

TEST(KernelLog, ReadsKmsgRecordsDmesgLinesAndPlainLines) {
  auto k = parse_kernel_log_line("4,2001,5000000123,-;NVRM: Xid (PCI:0000:0d:00): 31, pid=1");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->message, "NVRM: Xid (PCI:0000:0d:00): 31, pid=1");
  ASSERT_TRUE(k->uptime_s);
  EXPECT_NEAR(*k->uptime_s, 5000.000123, 1e-6);
  EXPECT_FALSE(parse_kernel_log_line(" SUBSYSTEM=pci"));  // continuation of a record
  auto d = parse_kernel_log_line("[ 1234.567890] NVRM: hello");
  ASSERT_TRUE(d && d->uptime_s);
  EXPECT_EQ(d->message, "NVRM: hello");
  EXPECT_NEAR(*d->uptime_s, 1234.56789, 1e-6);
  auto t = parse_kernel_log_line("[Fri Oct 14 14:56:49 2022] NVRM: hi");  // dmesg -T: no uptime
  ASSERT_TRUE(t);
  EXPECT_EQ(t->message, "NVRM: hi");
  EXPECT_FALSE(t->uptime_s);
  auto s = parse_kernel_log_line("Oct 14 15:01:00 node1 kernel: text");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->message, "Oct 14 15:01:00 node1 kernel: text");
  // Digits that are not a record header stay text.
  auto n = parse_kernel_log_line("12 monkeys; and more");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->message, "12 monkeys; and more");
}

TEST(KernelLog, MissingFileNamesThePath) {
  try {
    KernelLog::read("/nonexistent/kmsg");
    FAIL() << "no error";
  } catch (const KernelLogError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/kmsg"), std::string::npos);
  }
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

TEST(XidCatalogue, BuiltinHoldsAppendixAAndNvidiaActions) {
  const XidCatalogue& c = XidCatalogue::builtin();
  EXPECT_GE(c.size(), 143u);
  // GCM's non-critical set, and nothing else, is WARNING.
  for (int code = 1; code <= 143; ++code) {
    bool non_critical =
        code == 13 || code == 31 || code == 43 || code == 45 || code == 63 || code == 68 || code == 92 || code == 109;
    EXPECT_EQ(c.lookup(code).severity, non_critical ? XidSeverity::Warn : XidSeverity::Critical) << code;
  }
  XidInfo x31 = c.lookup(31);
  EXPECT_EQ(x31.causes, (std::vector<std::string>{"Driver Error", "HW Error", "User App Error"}));
  XidInfo x48 = c.lookup(48);
  EXPECT_EQ(x48.causes, std::vector<std::string>{"HW Error"});
  EXPECT_EQ(x48.description, "Double Bit ECC Error");
  EXPECT_EQ(x48.immediate_action, "WORKFLOW_XID_48");
  XidInfo x79 = c.lookup(79);
  EXPECT_EQ(x79.immediate_action, "RESTART_BM");
  EXPECT_TRUE(c.lookup(5).causes.empty());
  // A code the catalogue does not know is critical, as in GCM.
  EXPECT_EQ(c.lookup(9999).severity, XidSeverity::Critical);
  EXPECT_EQ(c.lookup(154).mnemonic, "GPU_RECOVERY_ACTION_CHANGED");
}

TEST(XidCatalogue, OverridesAndErrors) {
  XidCatalogue c = XidCatalogue::builtin();
  c.apply_override("63=ignore");
  c.apply_override("48=warn");
  c.apply_override("5000=ignore");
  EXPECT_EQ(c.lookup(63).severity, XidSeverity::Ignore);
  EXPECT_EQ(c.lookup(48).severity, XidSeverity::Warn);
  EXPECT_EQ(c.lookup(48).causes, std::vector<std::string>{"HW Error"});  // the rest of the entry stays
  EXPECT_EQ(c.lookup(5000).severity, XidSeverity::Ignore);
  EXPECT_THROW(c.apply_override("63"), XidCatalogueError);
  EXPECT_THROW(c.apply_override("x=warn"), XidCatalogueError);
  EXPECT_THROW(c.apply_override("63=fatal"), XidCatalogueError);
  try {
    XidCatalogue::parse("[[xid]]\ncode = 1\n\n[[xid]]\ncode = 2\nseverity = \"loud\"\n", "site.toml");
    FAIL() << "no error";
  } catch (const XidCatalogueError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("site.toml: line 4"), std::string::npos) << m;
    EXPECT_NE(m.find("loud"), std::string::npos) << m;
  }
  EXPECT_THROW(XidCatalogue::parse("[[xid]]\ncode = 1\n[[xid]]\ncode = 1\n", "dup.toml"), XidCatalogueError);
  EXPECT_THROW(XidCatalogue::parse("xid = [\n", "broken.toml"), XidCatalogueError);
}

}  // namespace
}  // namespace gcm::health
