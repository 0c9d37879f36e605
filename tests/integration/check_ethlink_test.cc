// health_checks end to end on a fake host (host_checks_fixture.h): check-ethlink: Ethernet links against a manifest.
#include "host_checks_fixture.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ------------------------------------------------------------------------------------------------ check-ethlink

// The shared Ethernet state fixtures as a host: ifcfg files, sysfs speeds, `ip -j addr` and `ethtool -P`.
void eth_host(Host& h, const std::string& fixture) {
  json j = json::parse(read_text(fixture));
  for (const auto& [ifname, cfg] : j["intf_ifcfg"].items()) {
    if (cfg.is_null()) continue;
    std::string text;
    for (const auto& [k, v] : cfg.items()) text += k + "=" + v.get<std::string>() + "\n";
    h.write(h.root + "/etc/sysconfig/network-scripts/ifcfg-" + ifname, text);
  }
  for (const auto& [ifname, speed] : j["link_speed"].items())
    h.write(h.sys + "/class/net/" + ifname + "/speed", speed.get<std::string>() + "\n");
  h.write(h.dir + "/ip.json", j["intf_status"].dump());
  h.tool_prints("ip", h.dir + "/ip.json");
  std::string cases;
  for (const auto& [ifname, mac] : j["phys_macaddr"].items())
    cases += "  " + ifname + ") echo 'Permanent address: " + mac.get<std::string>() + "';;\n";
  h.tool("ethtool",
         "case \"$2\" in\n" + cases + "  *) echo \"Cannot get permanent address of $2\" >&2; exit 1;;\nesac");
}

CommandResult ethlink(Host& h, const std::string& manifest) {
  return h.run(
      {"check-ethlink", "c", "app", "--manifest_file", manifest, "--path.sysfs", h.sys, "--path.rootfs", h.root});
}

TEST(HostChecksEthlink, SharedStates) {
  REQUIRE_SHARED();
  struct Case {
    const char* fixture;
    int code;
    const char* text;
  } cases[] = {
      {"eth_learn_good.json", OK, "3 ethernet interfaces good"},
      {"eth_learn_missing_intf.json", CRIT, "Missing interface PCIE_4 (enp225s0f0)!"},
      {"eth_learn_down_intf.json", CRIT, "PCIE_4 (enp225s0f0) is DOWN"},
      {"eth_learn_degraded_intf.json", WARN, "is slower than expected (200000Mbps vs 400000Mbps)"},
  };
  for (const auto& c : cases) {
    Host h;
    eth_host(h, kShared + c.fixture);
    SCOPED_TRACE(c.fixture);
    EXPECT_VERDICT(ethlink(h, kShared + "DGX_A100.json"), c.code, c.text);
  }
  Host h;
  EXPECT_VERDICT(ethlink(h, kShared + "empty.json"), OK, "No ethernet interface in manifest, skipping");
}

TEST(HostChecksEthlink, WrongMacWrongMtuMissingFlag) {
  REQUIRE_SHARED();
  Host h;
  eth_host(h, kShared + "eth_learn_good.json");
  h.write(h.root + "/etc/sysconfig/network-scripts/ifcfg-enp97s0f0",
          "DEVICE=enp97s0f0\nHWADDR=\"aa:bb:cc:dd:ee:ff\"\n");
  EXPECT_VERDICT(ethlink(h, kShared + "DGX_A100.json"), CRIT,
                 "PCIE_5 (enp97s0f0) has bad cfg (expect: aa:bb:cc:dd:ee:ff, actual: hwaddr1)!");

  Host m;
  eth_host(m, kShared + "eth_learn_good.json");
  json ip = json::parse(read_text(m.dir + "/ip.json"));
  ip[2]["mtu"] = 1500;  // front0
  m.write(m.dir + "/ip.json", ip.dump());
  EXPECT_VERDICT(ethlink(m, kShared + "DGX_A100.json"), WARN, "front0 (front0) has bad mtu (1500 < 9192)");
  ip[2]["mtu"] = 9192;
  ip[0]["flags"] = json::array({"BROADCAST", "MULTICAST", "UP"});  // enp97s0f0 lost LOWER_UP and SLAVE
  m.write(m.dir + "/ip.json", ip.dump());
  EXPECT_VERDICT(ethlink(m, kShared + "DGX_A100.json"), CRIT,
                 "PCIE_5 (enp97s0f0) has missing flag(s): SLAVE, LOWER_UP");
  // ethtool missing from PATH: named, WARNING.
  fs::remove(m.bin + "/ethtool");
  EXPECT_VERDICT(ethlink(m, kShared + "DGX_A100.json"), WARN, "ethtool: not found on PATH (exit 127)");
}

}  // namespace
}  // namespace gcm::testing
