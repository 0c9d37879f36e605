// health_checks end to end on a fake host (host_checks_fixture.h): every host check honours its own killswitch.
#include "host_checks_fixture.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ------------------------------------------------------------------------------------------------- killswitches

TEST(HostChecksKillswitch, EachCheckHonoursItsOwnFlag) {
  Host h;  // no host file exists here and the tools fail, so a check that ran would not exit 0
  for (const char* t : {"passwd", "systemctl", "ssh", "scontrol", "sinfo", "dmidecode", "rpm", "ip"})
    h.tool(t, "exit 1");
  struct Case {
    std::vector<std::string> cmd;
    const char* flag;
    const char* name;
  } cases[] = {
      {{"check-process", "check-zombie"}, "disable_check_zombie", "check zombie"},
      {{"check-process", "check-dstate"}, "disable_check_dstate", "check dstate"},
      {{"check-process", "check-running-process", "-p", "x"}, "disable_running_process", "running process"},
      {{"check-storage", "disk-usage", "-v", "/x"}, "disable_disk_usage", "disk usage"},
      {{"check-storage", "disk-size", "-v", "/x", "--operator", ">", "--value", "1"}, "disable_disk_size", "disk size"},
      {{"check-storage", "mounted-directory", "-d", "/x"}, "disable_mounted_dir", "mounted directory"},
      {{"check-storage", "file-exists", "-f", "/x"}, "disable_file_exists", "file exists check"},
      {{"check-storage", "directory-exists", "-d", "/x"}, "disable_dir_exists", "directory exists check"},
      {{"check-storage", "check-mountpoint", "--mountpoint", "/x"}, "disable_check_mountpoint", "check mountpoint"},
      {{"check-processor", "processor-freq"}, "disable_proc_freq", "processor frequency"},
      {{"check-processor", "cpufreq-governor"}, "disable_freq_governor", "frequency governor"},
      {{"check-processor", "check-mem-size", "--dimms", "1", "--total-size", "1"},
       "disable_check_mem_size",
       "check memory size"},
      {{"check-processor", "check-buddyinfo"}, "disable_check_buddyinfo", "check buddyinfo"},
      {{"check-processor", "check-clocksource", "--expected-source", "tsc"},
       "disable_check_clocksource",
       "check clocksource"},
      {{"check-service", "service-status", "-s", "x"}, "disable_service_status", "service status"},
      {{"check-service", "package-version", "-p", "x", "-v", "1"}, "disable_package_version", "package version"},
      {{"check-service", "slurmctld-count", "--slurmctld-count", "1"}, "disable_slrmctld_count", "slurmctld count"},
      {{"check-service", "node-slurm-state"}, "disable_slurm_state", "slurm state"},
      {{"check-service", "cluster-availability"}, "disable_slurm_cluster_avail", "slurm cluster availability"},
      {{"check-service", "ssh-connection", "--host", "x"}, "disable_check_ssh", "check ssh"},
      {{"check-node", "uptime"}, "disable_check_uptime", "check uptime"},
      {{"check-node", "check-module", "-m", "x"}, "disable_check_module", "check module"},
      {{"check-node", "check-dnf-repos"}, "disable_check_dnf_repos", "check dnf repos"},
      {{"check-ib", "check-ibstat"}, "disable_check_ibstat", "check ibstat"},
      {{"check-ib", "check-ib-interfaces"}, "disable_check_ib_interfaces", "check ib interfaces"},
      {{"check-ib", "check-iblink", "--manifest_file", "/x"}, "disable_check_iblink", "check iblink"},
      {{"check-hca", "--expected-count", "1"}, "disable_hca_count", "hca count"},
      {{"check-pci", "--manifest_file", "/x"}, "disable_check_pci", "check pci"},
      {{"check-ethlink", "--manifest_file", "/x"}, "disable_check_ethlink", "check ethlink"},
      {{"check-blockdev", "--manifest_file", "/x"}, "disable_check_blockdev", "check blockdev"},
      {{"check-ipmitool", "check-sel"}, "disable_ipmi_sel", "ipmitool sel"},
      {{"check-sensors"}, "disable_check_sensors", "check sensors"},
      {{"check-authentication", "password-status"}, "disable_pass_status", "check password status"},
      {{"check-authentication", "check-path-access-by-user", "-p", "/x"},
       "disable_user_access_path_check",
       "check path access"},
      {{"check-ssh-certs", "--host", "x"}, "disable_check_ssh_certs", "check ssh certs"},
      {{"check-airstore", "flash-array-credential-count", "--expected-count-ge", "1"},
       "disable_airstore_credential_count",
       "airstore credential count"},
  };
  // The host as seen by these checks: empty roots, no tools but sudo.
  std::vector<std::string> roots = {"--path.procfs", h.proc, "--path.sysfs", h.sys, "--path.rootfs", h.root};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.flag);
    std::string features = h.dir + "/features.toml";
    h.write(features, std::string("[HealthChecksFeatures]\n") + c.flag + " = true\n");
    std::vector<std::string> args = {"--features-config", features};
    args.insert(args.end(), c.cmd.begin(), c.cmd.end());
    args.insert(args.end(), {"c", "app", "--sink", "stdout"});
    // Only the root options the check has.
    std::vector<std::string> help_args;
    for (const auto& a : c.cmd) {
      if (a[0] == '-') break;
      help_args.push_back(a);
    }
    help_args.push_back("--help");
    std::string help = h.run(help_args).out;
    for (size_t i = 0; i < roots.size(); i += 2)
      if (help.find(roots[i]) != std::string::npos) args.insert(args.end(), {roots[i], roots[i + 1]});
    // No controller either: the real Slurm tools find no configuration.
    auto r = h.run(args, {"SLURM_CONF=" + h.dir + "/no-slurm.conf"});
    EXPECT_VERDICT(r, OK, std::string(c.name) + " is disabled by killswitch.");
    EXPECT_NE(r.out.find("\"health_check\": \"" + std::string(c.name) + "\""), std::string::npos) << r.out;
    // Another check's flag does not disable this one.
    h.write(features, "[HealthChecksFeatures]\ndisable_nvidia_smi = true\n");
    r = h.run(args, {"SLURM_CONF=" + h.dir + "/no-slurm.conf"});
    EXPECT_EQ(r.out.find("disabled by killswitch"), std::string::npos) << r.out;
    EXPECT_NE(r.exit_code, OK) << r.out;
  }
}

}  // namespace
}  // namespace gcm::testing
