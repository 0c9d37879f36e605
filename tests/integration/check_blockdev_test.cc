// health_checks end to end on a fake host (host_checks_fixture.h): check-blockdev: NVMe drives through smartctl.
#include "host_checks_fixture.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ------------------------------------------------------------------------------------------------ check-blockdev

// A fake smartctl that prints <dir>/<device name>.json, like `smartctl -xj /dev/nvmeN` (exit 4 like a drive whose
// log read failed when the file is absent).
void smartctl_from(Host& h, const std::string& dir) {
  h.tool("smartctl", "f='" + dir + "'/$(basename \"$2\").json\n[ -f \"$f\" ] || { echo '{}'; exit 4; }\ncat \"$f\"");
}

CommandResult blockdev(Host& h, const std::string& manifest) {
  return h.run({"check-blockdev", "c", "app", "--manifest_file", manifest});
}

TEST(HostChecksBlockdev, SharedDumps) {
  REQUIRE_SHARED();
  struct Case {
    const char* dumps;
    const char* manifest;
    int code;
    const char* text;
  } cases[] = {
      {"learn_good", "DGX_A100.json", OK, "blockdev passes"},
      {"learn_bad_nvme9", "DGX_A100.json", CRIT, "has low spare space (0% < 11%)"},
      {"learn_missing_smartdata", "DGX_A100.json", CRIT, "Unable to read health logs from drive"},
      {"cache_good", "cache_milan.json", OK, "blockdev passes"},
      {"cache_good", "Altus_XE1211_Cache_Rome.json", OK, "blockdev passes"},
  };
  for (const auto& c : cases) {
    Host h;
    smartctl_from(h, kShared + "smartctl_dumps/" + c.dumps);
    SCOPED_TRACE(c.dumps);
    EXPECT_VERDICT(blockdev(h, kShared + c.manifest), c.code, c.text);
  }
}

TEST(HostChecksBlockdev, WarningsAreWarningsAndFailuresCritical) {
  REQUIRE_SHARED();
  auto variant = [](Host& h, const std::function<void(json&)>& edit) {
    std::string dir = h.dir + "/dumps";
    fs::create_directories(dir);
    for (const auto& e : fs::directory_iterator(kShared + "smartctl_dumps/learn_good")) {
      json j = json::parse(read_text(e.path().string()));
      if (e.path().filename() == "nvme1.json") edit(j);  // slot U.2_0
      h.write(dir + "/" + e.path().filename().string(), j.dump());
    }
    smartctl_from(h, dir);
  };
  {
    Host h;  // worn (85 % used): a warning, WARNING (the reference said CRITICAL)
    variant(h, [](json& j) { j["nvme_smart_health_information_log"]["percentage_used"] = 85; });
    auto r = blockdev(h, kShared + "DGX_A100.json");
    EXPECT_VERDICT(r, WARN, "LIFETIME_LOW");
    EXPECT_NE(r.out.find("Block device(s) unhealthy: U.2_0 |"), std::string::npos) << r.out;
  }
  {
    Host h;  // counters that cannot be true
    variant(h, [](json& j) { j["nvme_smart_health_information_log"]["data_units_read"] = 0; });
    EXPECT_VERDICT(blockdev(h, kShared + "DGX_A100.json"), WARN, "BAD_SMARTDATA");
  }
  {
    Host h;  // SMART's own verdict
    variant(h, [](json& j) { j["smart_status"]["passed"] = false; });
    EXPECT_VERDICT(blockdev(h, kShared + "DGX_A100.json"), CRIT, "SMART_FAILED");
  }
  {
    Host h;  // smaller than the manifest, and past its lifetime
    variant(h, [](json& j) {
      j["nvme_total_capacity"] = 1920000000000LL;
      j["nvme_smart_health_information_log"]["percentage_used"] = 120;
    });
    auto r = blockdev(h, kShared + "DGX_A100.json");
    EXPECT_VERDICT(r, CRIT, "SIZE_MISMATCH");
    EXPECT_NE(r.out.find("LIFETIME_EXCEEDED"), std::string::npos) << r.out;
  }
  {
    Host h;  // garbage from smartctl, and smartctl missing
    h.tool("smartctl", "echo 'Smartctl open device: /dev/nvme1 failed: No such device'; exit 2");
    EXPECT_VERDICT(blockdev(h, kShared + "DGX_A100.json"), CRIT, "Unable to read health logs from drive");
    fs::remove(h.bin + "/smartctl");
    EXPECT_VERDICT(blockdev(h, kShared + "DGX_A100.json"), CRIT, "smartctl: not found on PATH (exit 127)");
  }
}

}  // namespace
}  // namespace gcm::testing
