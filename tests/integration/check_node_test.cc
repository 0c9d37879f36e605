// health_checks end to end on a fake host (host_checks_fixture.h): check-node: uptime, modules, repositories.
#include "host_checks_fixture.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// --------------------------------------------------------------------------------------------------- check-node

TEST(HostChecksNode, UptimeModulesRepos) {
  Host h;
  h.write(h.proc + "/uptime", "86400.12 100.00\n");
  EXPECT_VERDICT(h.run({"check-node", "uptime", "c", "app", "--path.procfs", h.proc}), OK, "Node up for 86400 s.");
  h.write(h.proc + "/uptime", "120.50 100.00\n");
  EXPECT_VERDICT(h.run({"check-node", "uptime", "c", "app", "--path.procfs", h.proc}), WARN, "Node recently booted");
  h.write(h.proc + "/modules",
          "nvidia_uvm 1519616 0 - Live 0x0000000000000000 (POE)\nnvidia_drm 69632 0 - Live 0x0 (POE)\n"
          "nvidia 56463360 2 nvidia_uvm, Live 0x0 (POE)\nmlx5_core 1654784 1 mlx5_ib, Live 0x0\n");
  EXPECT_VERDICT(
      h.run({"check-node", "check-module", "c", "app", "--path.procfs", h.proc, "-m", "nvidia", "--mod_count", "3"}),
      OK, "Module nvidia: 3 loaded, expected at least 3.");
  EXPECT_VERDICT(h.run({"check-node", "check-module", "c", "app", "--path.procfs", h.proc, "-m", "mlx5_core", "-m",
                        "nvidia_peermem"}),
                 CRIT, "Module nvidia_peermem: 0 loaded, expected at least 1.");
  auto r = h.run({"check-node", "check-module", "c", "app", "--path.procfs", h.proc, "-m", "a", "-m", "b",
                  "--mod_count", "1", "--mod_count", "2", "--mod_count", "3"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;

  h.tool("dnf", "echo 'Repo-id : baseos'");
  EXPECT_VERDICT(h.run({"check-node", "check-dnf-repos", "c", "app"}), OK, "dnf repositories are reachable.");
  h.tool("dnf", "echo 'Errors during downloading metadata for repository baseos' >&2; exit 1");
  EXPECT_VERDICT(h.run({"check-node", "check-dnf-repos", "c", "app"}), CRIT,
                 "dnf repolist failed: dnf exited with code 1");
}

}  // namespace
}  // namespace gcm::testing
