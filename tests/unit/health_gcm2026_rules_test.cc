// Rules of GCM's 2026 changes to existing checks: check-nvidia-smi -c clock_policy's evaluation, check-ethlink's
// nmcli fallback and DCGM 4.x `dcgmi diag` JSON next to 3.x.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "health/clock_policy.h"
#include "health/dcgmi_output.h"
#include "health/nmcli_device.h"

namespace gcm::health {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health_checks/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---- clock_policy ----

TEST(ClockPolicy, DriftAboveWarnAndCriticalDeltas) {
  ClockPolicy p;  // GCM's defaults: 1155 / 1593 MHz, warn 30, critical 75
  auto ok = evaluate_clock_policy(1155, 1593, p);
  EXPECT_TRUE(ok.compliant);
  EXPECT_EQ(ok.severity, ExitCode::OK);
  EXPECT_EQ(evaluate_clock_policy(1185, 1593, p).severity, ExitCode::OK);  // exactly the warn delta: not above
  auto warn = evaluate_clock_policy(1155, 1593 - 31, p);
  EXPECT_EQ(warn.severity, ExitCode::WARN);
  EXPECT_FALSE(warn.compliant);
  EXPECT_EQ(warn.memory_delta_mhz, -31);
  EXPECT_EQ(warn.graphics_delta_mhz, 0);
  // A clock set too high drifts too: the larger absolute delta decides.
  auto crit = evaluate_clock_policy(1410, 1600, p);
  EXPECT_EQ(crit.severity, ExitCode::CRITICAL);
  EXPECT_EQ(crit.graphics_delta_mhz, 255);
  EXPECT_EQ(crit.memory_delta_mhz, 7);
  EXPECT_EQ(evaluate_clock_policy(1155 + 75, 1593, p).severity, ExitCode::WARN);
  EXPECT_EQ(evaluate_clock_policy(1155 + 76, 1593, p).severity, ExitCode::CRITICAL);
}

// ---- nmcli ----

TEST(NmcliDevice, TerseFieldsBecomeIfcfgKeys) {
  auto cfg = parse_nmcli_device_show(fixture("nmcli_device_show_eth0.txt"), "eth0");
  ASSERT_TRUE(cfg);
  EXPECT_EQ(cfg->at("HWADDR"), "0C:42:A1:5E:00:11");  // colons of the MAC survive: -e no, split at the first ':'
  EXPECT_EQ(cfg->at("DEVICE"), "eth0");
  EXPECT_EQ(cfg->at("NAME"), "eth0");  // "--": no connection, the interface's name
  EXPECT_EQ(cfg->at("TYPE"), "Ethernet");
  EXPECT_EQ(cfg->at("MTU"), "9000");
  EXPECT_EQ(cfg->at("STATE"), "100 (connected)");
  auto named = parse_nmcli_device_show("GENERAL.HWADDR:aa:bb:cc:dd:ee:ff\nGENERAL.CONNECTION:System eth1\n", "eth1");
  ASSERT_TRUE(named);
  EXPECT_EQ(named->at("NAME"), "System eth1");
  EXPECT_EQ(named->at("DEVICE"), "eth1");
  EXPECT_EQ(named->at("TYPE"), "");
}

TEST(NmcliDevice, NoHwaddrIsNoConfiguration) {
  EXPECT_FALSE(parse_nmcli_device_show("", "eth0"));
  EXPECT_FALSE(parse_nmcli_device_show("GENERAL.HWADDR:\nGENERAL.DEVICE:eth0\n", "eth0"));
  EXPECT_FALSE(parse_nmcli_device_show("Error: Device 'eth9' not found.\n", "eth9"));
}

TEST(NmcliDevice, ArgvIsGcms) {
  EXPECT_EQ(nmcli_device_show_argv("eth0"),
            (std::vector<std::string>{"nmcli", "-t", "-e", "no", "-f",
                                      "GENERAL.HWADDR,GENERAL.DEVICE,GENERAL.TYPE,GENERAL.MTU,GENERAL.STATE,"
                                      "GENERAL.CONNECTION",
                                      "device", "show", "eth0"}));
}

// ---- dcgmi diag, DCGM 4.x ----

TEST(DcgmiDiag4, FailingGpuIsNamedFromEntityId) {
  auto v = evaluate_dcgmi_diag(fixture("dcgmi_diag_4x_memory_fail.json"), {});
  EXPECT_EQ(v.code, ExitCode::CRITICAL);
  EXPECT_EQ(v.msg, "memory failed on GPU 1: Found 2 uncorrectable memory errors on GPU 1.");
}

TEST(DcgmiDiag4, ExclusionsTakeThe3xNames) {
  auto v = evaluate_dcgmi_diag(fixture("dcgmi_diag_4x_memory_fail.json"), {"GPU Memory"});
  EXPECT_EQ(v.code, ExitCode::OK) << v.msg;  // 3.x's "GPU Memory" is 4.x's "memory"
  EXPECT_EQ(v.msg, "All checks passed.");
}

TEST(DcgmiDiag4, TestSummaryAloneDecides) {
  // A test with no per-GPU result (a skipped or system-wide test) but a failing summary, as GCM judges 4.x.
  std::string doc = R"({"DCGM Diagnostic": {"test_categories": [{"category": "Stress", "tests": [
      {"name": "targeted_power", "results": [], "test_summary": {"status": "Warn",
       "warnings": [{"warning": "Power limit reached"}]}}]}]}})";
  auto v = evaluate_dcgmi_diag(doc, {});
  EXPECT_EQ(v.code, ExitCode::WARN);
  EXPECT_EQ(v.msg, "targeted_power warning: Power limit reached.");
  EXPECT_EQ(evaluate_dcgmi_diag(doc, {"Targeted Power"}).code, ExitCode::OK);
  EXPECT_EQ(evaluate_dcgmi_diag(doc, {"Targeted Stress"}).code, ExitCode::WARN);
}

TEST(DcgmiDiag4, NeitherDocumentKeyCannotBeJudged) {
  auto v = evaluate_dcgmi_diag(R"({"DCGM Diagnostics": {"test_categories": []}})", {});
  EXPECT_EQ(v.code, ExitCode::WARN);
  EXPECT_NE(v.msg.find("\"DCGM Diagnostic\""), std::string::npos) << v.msg;
}

}  // namespace
}  // namespace gcm::health
