// health_checks end to end on a fake host (host_checks_fixture.h): check-service: systemctl, packages, ssh.
#include "host_checks_fixture.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ------------------------------------------------------------------------------------------------ check-service

TEST(HostChecksService, SystemctlPackagesSsh) {
  Host h;
  h.tool("systemctl", "case \"$2\" in slurmd|munge) echo active;; *) echo inactive; exit 3;; esac");
  EXPECT_VERDICT(h.run({"check-service", "service-status", "c", "app", "-s", "slurmd", "-s", "munge"}), OK,
                 "Service munge: running. Status: active");
  EXPECT_VERDICT(h.run({"check-service", "service-status", "c", "app", "-s", "slurmd", "-s", "nvidia-fabricmanager"}),
                 CRIT, "Service nvidia-fabricmanager: not running. error_code: 3, status: inactive");
  // Only the fake tools on PATH, and no systemctl among them.
  fs::remove(h.bin + "/systemctl");
  EXPECT_VERDICT(h.run({"check-service", "service-status", "c", "app", "-s", "slurmd"}, {"PATH=" + h.bin}), CRIT,
                 "systemctl: not found on PATH (exit 127)");

  h.tool("rpm", "[ \"$4\" = slurm ] && { echo 22.05.8-1.el8; exit 0; }\necho \"package $4 is not installed\"; exit 1");
  EXPECT_VERDICT(h.run({"check-service", "package-version", "c", "app", "-p", "slurm", "-v", "22.05.8-1.el8"}), OK,
                 "Package slurm: version 22.05.8-1.el8 as expected.");
  EXPECT_VERDICT(h.run({"check-service", "package-version", "c", "app", "-p", "slurm", "-v", "23.02.1-1.el8"}), CRIT,
                 "Version missmatch. Package slurm: expected 23.02.1-1.el8, found 22.05.8-1.el8.");
  EXPECT_VERDICT(h.run({"check-service", "package-version", "c", "app", "-p", "nccl", "-v", "2"}), WARN,
                 "Package nccl: rpm exited with code 1");
  h.tool("dpkg-query", "echo 22.05.8-4");
  EXPECT_VERDICT(h.run({"check-service", "package-version", "c", "app", "-p", "slurmd", "-v", "22.05.8-4",
                        "--package-manager", "dpkg"}),
                 OK, "version 22.05.8-4 as expected");

  h.tool("ssh",
         "[ \"$3\" = good ] && exit 0\necho \"ssh: connect to host $3 port 22: Connection refused\" >&2; exit 255");
  EXPECT_VERDICT(h.run({"check-service", "ssh-connection", "c", "app", "--host", "good"}), OK,
                 "Host good: ssh connection succeeded.");
  EXPECT_VERDICT(h.run({"check-service", "ssh-connection", "c", "app", "--host", "good", "--host", "bad"}), CRIT,
                 "Host bad: ssh connection failed. ssh exited with code 255: ssh: connect to host bad port 22");

  // slurmctld-count with recorded pings (the live testbed test below covers the real thing).
  h.tool_prints("scontrol", kOurs + "scontrol_ping_up.txt");
  EXPECT_VERDICT(h.run({"check-service", "slurmctld-count", "c", "app", "--slurmctld-count", "2"}), OK,
                 "slurmctld daemons up: 2");
  h.tool_prints("scontrol", kOurs + "scontrol_ping_backup_down.txt", 1);
  EXPECT_VERDICT(h.run({"check-service", "slurmctld-count", "c", "app", "--slurmctld-count", "2"}), CRIT,
                 "Insufficient slurmctld daemon count. Expected: 2, found: 1.");
  h.tool("scontrol", "echo 'slurm_load_ctl_conf error' >&2; exit 1");
  EXPECT_VERDICT(h.run({"check-service", "slurmctld-count", "c", "app", "--slurmctld-count", "1"}), WARN,
                 "scontrol exited with code 1");
}

}  // namespace
}  // namespace gcm::testing
