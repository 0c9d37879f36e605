// health_checks end to end on a fake host (host_checks_fixture.h): check-ipmitool check-sel and check-sensors (one test
// covers both).
#include "host_checks_fixture.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// --------------------------------------------------------------------------------------------- check-ipmitool

TEST(HostChecksIpmi, SelAndSensors) {
  Host h;
  h.tool_prints("ipmitool", kOurs + "ipmitool_sel_ok.txt");
  EXPECT_VERDICT(h.run({"check-ipmitool", "check-sel", "c", "app"}), OK, "sel reported no errors.");
  h.tool_prints("ipmitool", kOurs + "ipmitool_sel_ac_lost.txt");
  EXPECT_VERDICT(h.run({"check-ipmitool", "check-sel", "c", "app"}), CRIT,
                 "Detected error: Power Supply #0x52, Power Supply AC lost");
  h.tool_prints("ipmitool", kOurs + "ipmitool_sel_uncorrectable.txt");
  EXPECT_VERDICT(h.run({"check-ipmitool", "check-sel", "c", "app"}), CRIT, "Detected error: Memory #0x87");
  // More lines than the threshold: cleared; a failing clear is a warning.
  h.tool("ipmitool", "[ \"$2\" = clear ] && { echo clear >> '" + h.dir + "/cleared'; exit 1; }\ncat '" + kOurs +
                         "ipmitool_sel_long.txt'");
  EXPECT_VERDICT(h.run({"check-ipmitool", "check-sel", "c", "app"}), WARN, "clearing the SEL (45 lines) failed");
  EXPECT_TRUE(fs::exists(h.dir + "/cleared"));
  EXPECT_VERDICT(h.run({"check-ipmitool", "check-sel", "c", "app", "--clear_log_threshold", "50"}), OK,
                 "sel reported no errors.");
  h.tool_prints("nvipmitool", kOurs + "ipmitool_sel_ac_lost.txt");
  EXPECT_VERDICT(h.run({"check-ipmitool", "check-sel", "c", "app", "--nvipmitool"}), CRIT, "AC lost");
  fs::remove(h.bin + "/ipmitool");
  EXPECT_VERDICT(h.run({"check-ipmitool", "check-sel", "c", "app"}), WARN, "ipmitool: not found on PATH (exit 127)");

  h.tool_prints("ipmi-sensors", kOurs + "ipmi_sensors_ok.txt");
  EXPECT_VERDICT(h.run({"check-sensors", "c", "app"}), OK, "No ipmi-sensor errors.");
  h.tool_prints("ipmi-sensors", kOurs + "ipmi_sensors_fan_failed.txt");
  EXPECT_VERDICT(h.run({"check-sensors", "c", "app"}), CRIT,
                 "1 ipmi-sensor error(s): \nError in SYS_FAN_2: 0.00RPM 'Lower Critical' (Expected 'OK')");
  h.tool_prints("ipmi-sensors", kOurs + "ipmi_sensors_psu_absent.txt");
  EXPECT_VERDICT(h.run({"check-sensors", "c", "app"}), CRIT, "(Expected 'Presence detected')");
  h.tool_prints("ipmi-sensors", kOurs + "ipmi_sensors_not_redundant.txt");
  EXPECT_VERDICT(h.run({"check-sensors", "c", "app"}), WARN,
                 "Error in PSU_Redundancy:  'Redundancy Lost' (Expected 'Fully Redundant')");
  h.tool("ipmi-sensors", "echo 'ipmi_ctx_open_inband: driver timeout' >&2; exit 1");
  EXPECT_VERDICT(h.run({"check-sensors", "c", "app"}), WARN, "ipmi-sensors command FAILED to execute.");
}

}  // namespace
}  // namespace gcm::testing
