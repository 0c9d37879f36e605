// health_checks end to end on a fake host (host_checks_fixture.h): check-iblink and check-ib (ibstat interfaces, HCA
// count).
#include "host_checks_fixture.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ------------------------------------------------------------------------------------------------- check-iblink

CommandResult iblink(Host& h, const std::string& manifest) {
  return h.run({"check-ib", "check-iblink", "c", "app", "--manifest_file", manifest, "--path.sysfs", h.sys});
}

TEST(HostChecksIblink, SharedSnapshots) {
  REQUIRE_SHARED();
  struct Case {
    const char* snapshot;
    int code;
    const char* text;
  } cases[] = {
      {"learn_good.json", OK, "up: 8, down: 0"},
      {"learn_ib_misbound_if.json", CRIT, "MISBIND"},
      {"learn_stuck_ib_intf.json", WARN, "up: 6, down: 2"},
      {"learn_ib_intf_bad_rate.json", CRIT, "up: 0, down: 8"},
      {"empty.json", CRIT, "up: 0, down: 8"},
  };
  for (const auto& c : cases) {
    Host h;
    h.sysfs_snapshot(kShared + c.snapshot);
    SCOPED_TRACE(c.snapshot);
    auto r = iblink(h, kShared + "DGX_A100.json");
    EXPECT_VERDICT(r, c.code, c.text);
  }
}

TEST(HostChecksIblink, WrongFirmwareAndOperstateDown) {
  REQUIRE_SHARED();
  Host h;
  h.sysfs_snapshot(kShared + "learn_good.json");
  std::string card = h.sys + "/bus/pci/devices/0000:ba:00.0";
  h.write(card + "/infiniband/mlx5_8/fw_ver", "20.28.1002\n");
  auto r = iblink(h, kShared + "DGX_A100.json");
  // CRITICAL, as GCM's tests expect (reference §7.2).
  EXPECT_VERDICT(r, CRIT, "FIRMWARE_MISMATCH");
  EXPECT_NE(r.out.find("up: 7, down: 1"), std::string::npos) << r.out;
  h.write(card + "/net/ib6/operstate", "down\n");
  r = iblink(h, kShared + "DGX_A100.json");
  EXPECT_VERDICT(r, CRIT, "LINK_OPERSTATE_DOWN");
}

// ---------------------------------------------------------------------------------------------- check-ib, hca

TEST(HostChecksIb, IbstatInterfacesAndHcaCount) {
  Host h;
  h.tool_prints("ibstat", kOurs + "ibstat_all_up.txt");
  EXPECT_VERDICT(h.run({"check-ib", "check-ibstat", "c", "app"}), OK, "ib stat reported ok status (8 ports)");
  // Every link, the Ethernet port included: its physical state is Disabled.
  EXPECT_VERDICT(h.run({"check-ib", "check-ibstat", "c", "app", "--all-links"}), CRIT, "Link status is not LinkUp");
  h.tool_prints("ibstat", kOurs + "ibstat_port_down.txt");
  EXPECT_VERDICT(h.run({"check-ib", "check-ibstat", "c", "app"}), CRIT, "Link status is not LinkUp (1 of 8 ports");
  h.tool_prints("ibstat", kOurs + "ibstat_port_init.txt");
  EXPECT_VERDICT(h.run({"check-ib", "check-ibstat", "c", "app"}), OK, "ib stat reported ok status");
  EXPECT_VERDICT(h.run({"check-ib", "check-ibstat", "c", "app", "--state"}), CRIT, "Link state is not Active");
  h.tool("ibstat", "echo 'ibpanic: [1234] main: stat of IB device mlx5_0 failed' >&2; exit 1");
  EXPECT_VERDICT(h.run({"check-ib", "check-ibstat", "c", "app"}), WARN, "ibstat exited with code 1: ibpanic");

  h.tool_prints("ip", kOurs + "ip_link_all_ib_up.json");
  EXPECT_VERDICT(h.run({"check-ib", "check-ib-interfaces", "c", "app"}), OK, "8 InfiniBand interfaces UP");
  h.tool_prints("ip", kOurs + "ip_link_one_ib_down.json");
  EXPECT_VERDICT(h.run({"check-ib", "check-ib-interfaces", "c", "app"}), CRIT,
                 "7 InfiniBand interfaces UP, expected 8");
  EXPECT_VERDICT(h.run({"check-ib", "check-ib-interfaces", "c", "app", "--interface-num", "7"}), OK, "7 InfiniBand");
  h.tool("ip", "echo '[{\"ifname\": '");
  EXPECT_VERDICT(h.run({"check-ib", "check-ib-interfaces", "c", "app"}), CRIT, "not valid JSON");

  h.tool_prints("ibv_devinfo", kOurs + "ibv_devinfo_l_8.txt");
  EXPECT_VERDICT(h.run({"check-hca", "c", "app", "--expected-count", "8"}), OK, "reports 8 HCAs found");
  EXPECT_VERDICT(h.run({"check-hca", "c", "app", "--expected-count", "4"}), WARN, "reports 8 HCAs found, expected 4");
  h.tool_prints("ibv_devinfo", kOurs + "ibv_devinfo_l_1.txt");
  EXPECT_VERDICT(h.run({"check-hca", "c", "app", "--expected-count", "8"}), CRIT, "reports 1 HCAs found, expected 8");
  h.tool("ibv_devinfo", "echo 'Failed to get IB devices list: Function not implemented'");
  EXPECT_VERDICT(h.run({"check-hca", "c", "app", "--expected-count", "8"}), CRIT, "No HCA found");
  fs::remove(h.bin + "/ibv_devinfo");
  EXPECT_VERDICT(h.run({"check-hca", "c", "app", "--expected-count", "8"}), WARN, "ibv_devinfo: not found on PATH");
}

}  // namespace
}  // namespace gcm::testing
