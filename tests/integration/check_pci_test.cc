// health_checks end to end on a fake host (host_checks_fixture.h): check-pci: the PCI devices against a manifest.
#include "host_checks_fixture.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------------- check-pci

TEST(HostChecksPci, SharedSnapshotsAgainstTheirManifests) {
  REQUIRE_SHARED();
  struct Case {
    const char* snapshot;
    const char* manifest;
    int code;
    const char* text;
  } cases[] = {
      {"learn_good.json", "DGX_A100.json", OK, "PCIe Devices Good"},
      {"compute_samsung980pro.json", "DGX_A100.json", OK, "PCIe Devices Good"},
      {"cache_milan_good.json", "cache_milan.json", OK, "PCIe Devices Good"},
      {"cache_rome_good.json", "cache_rome.json", OK, "PCIe Devices Good"},
      {"empty.json", "DGX_A100.json", CRIT, "PCIe Issues Detected"},
  };
  for (const auto& c : cases) {
    Host h;
    h.sysfs_snapshot(kShared + c.snapshot);
    auto r = h.run({"check-pci", "c", "app", "--manifest_file", kShared + c.manifest, "--path.sysfs", h.sys});
    SCOPED_TRACE(c.snapshot);
    EXPECT_VERDICT(r, c.code, c.text);
  }
}

TEST(HostChecksPci, DegradedAndMissingDevicesOnADgxTree) {
  REQUIRE_SHARED();
  Host h;
  h.sysfs_snapshot(kShared + "learn_good.json");
  // A GPU's link trained at half width and a lower speed.
  std::string gpu = h.sys + "/class/pci_bus/0000:07/device/0000:07:00.0";
  ASSERT_TRUE(fs::exists(gpu + "/current_link_width")) << "fixture layout changed";
  h.write(gpu + "/current_link_width", "8\n");
  h.write(gpu + "/current_link_speed", "8.0 GT/s PCIe\n");
  auto r = h.run({"check-pci", "c", "app", "--manifest_file", kShared + "DGX_A100.json", "--path.sysfs", h.sys});
  EXPECT_VERDICT(r, CRIT, "has degraded PCIe link (current: 'x8 @ 8.0 GT/s PCIe', expected: 'x16 @ ");
  EXPECT_NE(r.out.find("'degraded'=1"), std::string::npos) << r.out;
  // A device gone from the bus.
  fs::remove_all(gpu);
  r = h.run({"check-pci", "c", "app", "--manifest_file", kShared + "DGX_A100.json", "--path.sysfs", h.sys});
  EXPECT_VERDICT(r, CRIT, "is not present at 0000:07:00.0.");
  EXPECT_NE(r.out.find("'missing'=1"), std::string::npos) << r.out;
}

TEST(HostChecksPci, ABadManifestIsAWarningNamingTheKey) {
  Host h;
  h.write(h.dir + "/m.json", R"({"pci": {"0000:01:00.0": {"link_width": "wide"}}})");
  auto r = h.run({"check-pci", "c", "app", "--manifest_file", h.dir + "/m.json", "--path.sysfs", h.sys});
  EXPECT_VERDICT(r, WARN, "pci.0000:01:00.0.link_width: expected an integer");
  r = h.run({"check-pci", "c", "app", "--manifest_file", h.dir + "/none.json", "--path.sysfs", h.sys});
  EXPECT_VERDICT(r, WARN, "Unable to open manifest file");
}

}  // namespace
}  // namespace gcm::testing
