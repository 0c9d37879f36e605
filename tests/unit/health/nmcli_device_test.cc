// check-ethlink's nmcli fallback: `nmcli -t device show` read as ifcfg keys.
#include <gtest/gtest.h>

#include "fixture_records.h"
#include "health/nmcli_device.h"

namespace gcm::health {
namespace {

const std::string kFixtures = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health_checks/";

std::string fixture(const std::string& name) { return gcm::testing::slurp(kFixtures + name); }

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

}  // namespace
}  // namespace gcm::health
