// health_checks end to end for GCM's 2026 additions (issue 19): check-ib check-ib-counters on a fixture sysfs,
// check-syslogs mce and pcie-aer on fixture kernel logs, check-nvidia-smi -c clock_policy on the fake NVML,
// check-dcgmi diag on DCGM 4.x JSON, check-ethlink's nmcli fallback, the IB fabric checks of GCM's PR #143 against
// stand-in tools on PATH and fake /dev/mst devices, their killswitches and telemetry names. The tool outputs are
// written from documentation (tests/fixtures/health_checks/README.md).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <set>

#include "fake_host.h"

namespace gcm::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kTools = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health_checks/";
const std::string kLogs = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health/kernel-log/";
constexpr int OK = 0, WARN = 1, CRIT = 2, UNKNOWN = 3;

// ---- check-ib check-ib-counters ----

TEST(IbCounters, FixtureSysfsPortsTheirErrorsAndMetrics) {
  FakeHost h;
  h.sysfs_snapshot(kTools + "sysfs_ib_counters.json");
  auto r = h.run({"check-ib", "check-ib-counters", "c", "app", "--path.sysfs", h.sys, "--sink", "stdout"});
  // mlx5_1 has 5 symbol errors and 2 receive errors: above the warn threshold 0, not the critical 100. The bond's
  // port has no counters directory and is not a port to check.
  EXPECT_CHECK(r, WARN,
               "2 ports checked, 1 with errors, total_errors=7 | 'total_errors'=7;0;100 "
               "'ports_with_errors'=1 'ports_checked'=2");
  EXPECT_NE(r.out.find("mlx5_1/1: symbol_error=5; port_rcv_errors=2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'mlx5_0/1.port_rcv_data'=17922110021"), std::string::npos) << r.out;
  auto recs = records_of(r.out);
  ASSERT_EQ(recs.size(), 1u) << r.out;
  EXPECT_EQ(recs[0]["health_check"], "ib port counters");
  EXPECT_EQ(recs[0]["result"], WARN);

  EXPECT_CHECK(h.run({"check-ib", "check-ib-counters", "c", "app", "--path.sysfs", h.sys, "--warn-threshold", "7"}), OK,
               "total_errors=7");
  EXPECT_CHECK(h.run({"check-ib", "check-ib-counters", "c", "app", "--path.sysfs", h.sys, "--crit-threshold", "6"}),
               CRIT, "total_errors=7");
  // One value per --critical-counters, the option repeated for several.
  EXPECT_CHECK(h.run({"check-ib", "check-ib-counters", "c", "app", "--path.sysfs", h.sys, "--warn-threshold", "10",
                      "--critical-counters", "link_downed", "--critical-counters", "symbol_error"}),
               CRIT, "total_errors=7");
}

TEST(IbCounters, LinkDownedIsCriticalAndNoPortIsWarning) {
  FakeHost h;
  h.sysfs_snapshot(kTools + "sysfs_ib_counters.json");
  h.write(h.sys + "/class/infiniband/mlx5_0/ports/1/counters/link_downed", "1\n");
  EXPECT_CHECK(h.run({"check-ib", "check-ib-counters", "c", "app", "--path.sysfs", h.sys, "--warn-threshold", "50"}),
               CRIT, "mlx5_0/1: link_downed=1");
  h.write(h.sys + "/class/infiniband/mlx5_0/ports/1/counters/symbol_error", "garbage\n");
  EXPECT_CHECK(h.run({"check-ib", "check-ib-counters", "c", "app", "--path.sysfs", h.sys}), CRIT,
               "unreadable counter mlx5_0/1: counters/symbol_error: 'garbage' is not a non-negative integer");
  FakeHost empty;
  EXPECT_CHECK(empty.run({"check-ib", "check-ib-counters", "c", "app", "--path.sysfs", empty.sys}), WARN,
               "No IB ports discovered");
  auto bad = empty.run({"check-ib", "check-ib-counters", "c", "app", "--critical-counters", "link_down"});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("link_down"), std::string::npos) << bad.err;
}

// ---- check-syslogs mce / pcie-aer ----

TEST(SyslogsMce, CountsEachClassWithGcmsMessage) {
  FakeHost h;
  auto r = h.run({"check-syslogs", "mce", "c", "app", "--path.kmsg", kLogs + "mce-dmesg.txt", "--sink", "stdout"});
  EXPECT_CHECK(r, CRIT, "CRITICAL - mce errors. 7 MCE event(s) detected (critical=2, warn=2, info=3).");
  EXPECT_NE(r.out.find("critical: mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 7: cc00008000010091"),
            std::string::npos)
      << r.out;
  auto recs = records_of(r.out);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0]["health_check"], "mce errors");
  EXPECT_CHECK(h.run({"check-syslogs", "mce", "c", "app", "--path.kmsg", kLogs + "clean-dmesg.txt"}), OK,
               "No MCE errors detected.");
  // Only the thermal events: WARNING.
  h.write(h.dir + "/thermal.txt",
          "[ 1.0] mce: CPU0: Thermal monitoring enabled (TM1)\n"
          "[ 5.0] mce: CPU12: Package temperature above threshold, cpu clock throttled (total events = 4)\n");
  EXPECT_CHECK(h.run({"check-syslogs", "mce", "c", "app", "--path.kmsg", h.dir + "/thermal.txt"}), WARN,
               "2 MCE event(s) detected (warn=1, info=1).");
  EXPECT_CHECK(h.run({"check-syslogs", "mce", "c", "app", "--path.kmsg", h.dir + "/absent"}), WARN,
               "kernel log could not be read");
}

TEST(SyslogsPcieAer, CountsEachClassWithGcmsMessage) {
  FakeHost h;
  auto r =
      h.run({"check-syslogs", "pcie-aer", "c", "app", "--path.kmsg", kLogs + "pcie-aer-dmesg.txt", "--sink", "stdout"});
  EXPECT_CHECK(r, CRIT, "CRITICAL - pcie aer errors. 4 PCIe AER error(s) detected (critical=2, warn=1, info=1).");
  auto recs = records_of(r.out);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0]["health_check"], "pcie aer errors");
  // Corrected errors alone: counted, and OK as in GCM.
  h.write(h.dir + "/corrected.txt", "[ 9.0] pcieport 0000:00:01.0: AER: Corrected error received: 0000:3b:00.0\n");
  EXPECT_CHECK(h.run({"check-syslogs", "pcie-aer", "c", "app", "--path.kmsg", h.dir + "/corrected.txt"}), OK,
               "1 PCIe AER error(s) detected (info=1).");
  EXPECT_CHECK(h.run({"check-syslogs", "pcie-aer", "c", "app", "--path.kmsg", kLogs + "clean-dmesg.txt"}), OK,
               "No PCIe AER errors detected.");
  // /dev/kmsg records work as for the other kernel-log checks.
  h.write(h.dir + "/kmsg.txt",
          "3,812,300300000,-;pcieport 0000:00:05.0: AER: Uncorrectable (Fatal) error received: "
          "0000:86:00.0\n SUBSYSTEM=pci\n");
  EXPECT_CHECK(h.run({"check-syslogs", "pcie-aer", "c", "app", "--path.kmsg", h.dir + "/kmsg.txt"}), CRIT,
               "1 PCIe AER error(s) detected (critical=1).");
}

// ---- check-nvidia-smi -c clock_policy ----

json gpu(int i, int graphics, int mem) {
  return {{"uuid", "GPU-" + std::to_string(i)}, {"app_clocks", {{"graphics", graphics}, {"mem", mem}}}};
}

CommandResult nvidia_smi(const FakeHost& h, const json& devices, std::vector<std::string> args) {
  h.write(h.dir + "/scenario.json", json{{"devices", devices}}.dump());
  std::vector<std::string> argv = {"check-nvidia-smi", "c", "app", "-c", "clock_policy", "--sink", "stdout"};
  argv.insert(argv.end(), args.begin(), args.end());
  return h.run(argv, {"GCM_FAKE_NVML_SCENARIO=" + h.dir + "/scenario.json",
                      std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML, "SLURM_JOB_GPUS=", "CUDA_VISIBLE_DEVICES="});
}

TEST(NvidiaSmiClockPolicy, DriftFromTheExpectedClocks) {
  FakeHost h;
  json two = json::array({gpu(0, 1155, 1593), gpu(1, 1410, 1593)});
  auto r = nvidia_smi(h, two, {});
  EXPECT_CHECK(r, CRIT,
               "clock_policy check: GPU 1, severity=CRITICAL, expected=(graphics:1155, memory:1593), "
               "observed=(graphics:1410, memory:1593), delta_mhz=(graphics:255, memory:0)");
  EXPECT_NE(r.out.find("clock_policy check: GPU 0, severity=OK,"), std::string::npos) << r.out;
  auto recs = records_of(r.out);
  ASSERT_EQ(recs.size(), 1u) << r.out;
  EXPECT_EQ(recs[0]["health_check"], "nvidia smi clock policy");
  EXPECT_EQ(recs[0]["result"], CRIT);
  // 1155 and 1410 against 1300: drifts of 145 and 110 MHz, above 100, not above 200.
  EXPECT_EQ(
      nvidia_smi(h, two, {"--expected-graphics-freq", "1300", "--warn-delta-mhz", "100", "--critical-delta-mhz", "200"})
          .exit_code,
      WARN);
  EXPECT_EQ(nvidia_smi(h, json::array({gpu(0, 1140, 1600)}), {}).exit_code, OK);
  EXPECT_CHECK(nvidia_smi(h, json::array({gpu(0, 1100, 1593)}), {"--expected-memory-freq", "1593"}), WARN,
               "delta_mhz=(graphics:-55, memory:0)");
  EXPECT_CHECK(nvidia_smi(h, json::array(), {}), WARN, "clock_policy check: No GPUs were detected on this host.");
}

TEST(NvidiaSmiClockPolicy, CriticalDeltaBelowWarnDeltaIsAUsageError) {
  FakeHost h;
  auto r = nvidia_smi(h, json::array({gpu(0, 1155, 1593)}), {"--warn-delta-mhz", "50", "--critical-delta-mhz", "40"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("critical-delta-mhz must be greater than or equal to warn-delta-mhz"),
            std::string::npos)
      << r.out << r.err;
  // Only when clock_policy runs, as in GCM.
  h.write(h.dir + "/scenario.json", json{{"devices", json::array({gpu(0, 1155, 1593)})}}.dump());
  auto other =
      h.run({"check-nvidia-smi", "c", "app", "-c", "gpu_num", "--gpu_num", "1", "--warn-delta-mhz", "50",
             "--critical-delta-mhz", "40"},
            {"GCM_FAKE_NVML_SCENARIO=" + h.dir + "/scenario.json", std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML});
  EXPECT_EQ(other.exit_code, OK) << other.out << other.err;
}

// The help's sub-check list comes from the same table as the values -c accepts: every value CLI11 lists in its
// "not in {...}" error is named in --help.
TEST(NvidiaSmiHelp, NamesEveryValueTheCheckOptionAccepts) {
  FakeHost h;
  auto bad = h.run({"check-nvidia-smi", "c", "app", "-c", "no_such_check"});
  EXPECT_EQ(bad.exit_code, 2);
  size_t open = bad.err.find('{'), close = bad.err.find('}', open);
  ASSERT_NE(open, std::string::npos) << bad.err;
  std::set<std::string> accepted;
  std::string list = bad.err.substr(open + 1, close - open - 1);
  for (size_t p = 0; p <= list.size();) {
    size_t c = list.find(',', p);
    if (c == std::string::npos) c = list.size();
    accepted.insert(list.substr(p, c - p));
    p = c + 1;
  }
  EXPECT_EQ(accepted.size(), 15u) << list;  // GCM's 14 (clock_policy included) and persistence_mode
  EXPECT_TRUE(accepted.count("clock_policy")) << list;
  EXPECT_TRUE(accepted.count("persistence_mode")) << list;
  auto help = h.run({"check-nvidia-smi", "--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  size_t line = help.out.find("-c gpu_num");
  ASSERT_NE(line, std::string::npos) << help.out;
  std::string names = help.out.substr(line, help.out.find('.', line) - line);
  for (const auto& a : accepted) EXPECT_NE(names.find(a), std::string::npos) << a << " missing from: " << names;
}

// ---- check-dcgmi diag, DCGM 4.x ----

TEST(DcgmiDiag4, FailingGpuOfADcgm4Document) {
  FakeHost h;
  h.tool_prints("dcgmi", kTools + "dcgmi_diag_4x_memory_fail.json");
  auto r = h.run({"check-dcgmi", "diag", "c", "app", "--sink", "stdout"});
  EXPECT_CHECK(r, CRIT, "memory failed on GPU 1: Found 2 uncorrectable memory errors on GPU 1.");
  auto recs = records_of(r.out);
  ASSERT_EQ(recs.size(), 1u) << r.out;
  EXPECT_EQ(recs[0]["health_check"], "check dcgmi diag");
  // -x takes GCM's (DCGM 3.x) test names; "GPU Memory" is 4.x's "memory".
  EXPECT_CHECK(h.run({"check-dcgmi", "diag", "c", "app", "-x", "GPU Memory"}), OK, "All checks passed.");
}

// ---- check-ethlink, nmcli fallback ----

struct EthHost : FakeHost {
  explicit EthHost(const std::string& permanent_mac = "0c:42:a1:5e:00:11") {
    write(dir + "/manifest.json",
          R"({"eth": {"PCIE_1": {"netdev": "eth0", "phys": true, "flags": ["UP", "LOWER_UP"], "mtu": 9000}}})");
    write(dir + "/ip.json", R"([{"ifname": "eth0", "operstate": "UP", "flags": ["BROADCAST", "UP", "LOWER_UP"],
                                 "mtu": 9000}])");
    tool_prints("ip", dir + "/ip.json");
    tool("ethtool", "echo 'Permanent address: " + permanent_mac + "'");
  }
  CommandResult check() const {
    return run({"check-ethlink", "c", "app", "--manifest_file", dir + "/manifest.json", "--path.rootfs", root,
                "--path.sysfs", sys});
  }
};

TEST(EthlinkNmcli, NoIfcfgFileTheConfigurationComesFromNmcli) {
  EthHost h;
  // nmcli is asked exactly GCM's question.
  h.tool("nmcli",
         "[ \"$*\" = '-t -e no -f GENERAL.HWADDR,GENERAL.DEVICE,GENERAL.TYPE,GENERAL.MTU,GENERAL.STATE,"
         "GENERAL.CONNECTION device show eth0' ] || { echo \"unexpected: $*\" >&2; exit 9; }\ncat '" +
             kTools + "nmcli_device_show_eth0.txt'");
  EXPECT_CHECK(h.check(), OK, "1 ethernet interfaces good");
  EthHost other("0c:42:a1:5e:00:99");
  other.tool_prints("nmcli", kTools + "nmcli_device_show_eth0.txt");
  EXPECT_CHECK(other.check(), CRIT,
               "PCIE_1 (eth0) has bad cfg (expect: 0c:42:a1:5e:00:11, actual: 0c:42:a1:5e:00:99)!");
}

TEST(EthlinkNmcli, NeitherIfcfgNorNmcliIsAMissingInterface) {
  EthHost h;  // no nmcli on PATH
  auto r = h.check();
  EXPECT_CHECK(r, CRIT, "Missing interface PCIE_1 (eth0)!");
  EXPECT_NE(r.out.find("nmcli: not found on PATH"), std::string::npos) << r.out;
  h.tool("nmcli", "echo \"Error: Device 'eth0' not found.\" >&2\nexit 10");
  EXPECT_CHECK(h.check(), CRIT, "Missing interface PCIE_1 (eth0)!");
  // An ifcfg file still wins over nmcli.
  h.write(h.root + "/etc/sysconfig/network-scripts/ifcfg-eth0", "DEVICE=eth0\nHWADDR=0C:42:A1:5E:00:11\n");
  EXPECT_CHECK(h.check(), OK, "1 ethernet interfaces good");
}

// ---- the IB fabric checks of GCM's PR #143 ----

TEST(IbPortErrors, IbdiagnetFiles) {
  FakeHost h;
  auto r = h.run({"check-ib", "check-ib-port-errors", "c", "app", "--pm-file", kTools + "ibdiagnet2_errors.pm",
                  "--discover-file", kTools + "ibdiagnet2.ibnetdiscover", "--sink", "stdout"});
  EXPECT_CHECK(r, CRIT, "4 port error(s) detected:\nleaf-a01/P17: symbol_error_counter=200");
  EXPECT_EQ(records_of(r.out).at(0)["health_check"], "check ib port errors");
  EXPECT_CHECK(h.run({"check-ib", "check-ib-port-errors", "c", "app", "--pm-file", kTools + "ibdiagnet2_errors.pm",
                      "--error-threshold", "1000"}),
               OK, "No port errors above threshold (1000).");
  EXPECT_CHECK(h.run({"check-ib", "check-ib-port-errors", "c", "app", "--pm-file", h.dir + "/none.pm"}), WARN,
               "PM file not found: " + h.dir + "/none.pm");
  // The default paths, under --path.rootfs.
  h.write(h.root + "/var/tmp/ibdiagnet2/ibdiagnet2.pm", read_text(kTools + "ibdiagnet2_clean.pm"));
  EXPECT_CHECK(h.run({"check-ib", "check-ib-port-errors", "c", "app", "--path.rootfs", h.root}), OK,
               "No port errors above threshold (0).");
}

// mlxlink / mlxcables stand-ins that answer per device, and fail for any other argument list.
void mst_tools(const FakeHost& h) {
  for (const char* d : {"mt4129_pciconf0", "mt4129_pciconf1", "mt4129_pciconf0_cable_0"})
    h.write(h.root + "/dev/mst/" + d, "");
  h.tool("mlxlink",
         "[ \"$1\" = -d ] && [ \"$3\" = -m ] || exit 9\ncase \"$2\" in\n"
         "  */mt4129_pciconf0) cat '" +
             kTools +
             "mlxlink_m_healthy.txt';;\n"
             "  */mt4129_pciconf1) cat '" +
             kTools +
             "mlxlink_m_rx_los.txt';;\n"
             "  *) echo \"-E- unexpected device $2\" >&2; exit 1;;\nesac");
  h.tool("mlxcables",
         "[ \"$1\" = -d ] && [ \"$3\" = --DDM ] || exit 9\ncase \"$2\" in\n"
         "  */mt4129_pciconf0_cable_0) cat '" +
             kTools +
             "mlxcables_ddm_alarm.txt';;\n"
             "  *) exit 1;;\nesac");
}

TEST(IbMlxlink, EachHcaOfDevMst) {
  FakeHost h;
  mst_tools(h);
  auto r = h.run({"check-ib", "check-mlxlink", "c", "app", "--path.rootfs", h.root, "--sink", "stdout"});
  EXPECT_CHECK(r, CRIT, "4 issue(s) across 2 HCA(s):\n" + h.root + "/dev/mst/mt4129_pciconf1: DataPath state=");
  EXPECT_NE(r.out.find("mt4129_pciconf1: Rx LOS=[0, 0, 1, 0]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("mt4129_pciconf0:"), std::string::npos) << r.out;  // the healthy one, and the cable skipped
  EXPECT_EQ(records_of(r.out).at(0)["health_check"], "check ib module health");
  fs::remove(h.root + "/dev/mst/mt4129_pciconf1");
  EXPECT_CHECK(h.run({"check-ib", "check-mlxlink", "c", "app", "--path.rootfs", h.root}), OK, "All 1 HCA(s) healthy");
  FakeHost none;
  EXPECT_CHECK(none.run({"check-ib", "check-mlxlink", "c", "app", "--path.rootfs", none.root}), UNKNOWN,
               "No IB pciconf devices found");
}

TEST(IbMlxcables, CableDdmAlarms) {
  FakeHost h;
  mst_tools(h);
  auto r = h.run({"check-ib", "check-mlxcables", "c", "app", "--path.rootfs", h.root, "--sink", "stdout"});
  EXPECT_CHECK(r, WARN, h.root + "/dev/mst/mt4129_pciconf0_cable_0: DDM ALARM detected");
  EXPECT_EQ(records_of(r.out).at(0)["health_check"], "check ib cable ddm");
  FakeHost none;
  EXPECT_CHECK(none.run({"check-ib", "check-mlxcables", "c", "app", "--path.rootfs", none.root}), UNKNOWN,
               "No IB cable devices found");
}

TEST(IbSmStatus, MasterStandbyMissingAndHung) {
  FakeHost h;
  h.tool_prints("sminfo", kTools + "sminfo_master.txt");
  auto r = h.run({"check-ib", "check-sm-status", "c", "app", "--sink", "stdout"});
  EXPECT_CHECK(r, OK, "SM reachable, state SMINFO_MASTER");
  EXPECT_EQ(records_of(r.out).at(0)["health_check"], "check ib sm status");
  h.tool_prints("sminfo", kTools + "sminfo_standby.txt");
  EXPECT_CHECK(h.run({"check-ib", "check-sm-status", "c", "app"}), WARN, "(expected MASTER)");
  FakeHost bare;
  EXPECT_CHECK(bare.run({"check-ib", "check-sm-status", "c", "app"}), CRIT,
               "SM unreachable (sminfo rc=127): sminfo: not found on PATH");
  h.tool("sminfo", "exec sleep 30");
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_CHECK(h.run({"check-ib", "check-sm-status", "c", "app", "--timeout", "1"}), CRIT,
               "SM unreachable (sminfo rc=128)");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(15));
}

TEST(IbUfmHealth, UnhealthyPortsAndTruncate) {
  FakeHost h;
  std::string dump = h.dir + "/unhealthy.dump";
  h.write(dump, read_text(kTools + "ufm_unhealthy_ports.dump"));
  auto r = h.run({"check-ib", "check-ufm-health", "c", "app", "--unhealthy-ports-file", dump, "--sink", "stdout"});
  EXPECT_CHECK(r, CRIT, "2 unhealthy port(s) reported by UFM:");
  EXPECT_EQ(records_of(r.out).at(0)["health_check"], "ib ufm health");
  EXPECT_FALSE(read_text(dump).empty());  // --no-truncate is the default
  EXPECT_CHECK(h.run({"check-ib", "check-ufm-health", "c", "app", "--unhealthy-ports-file", dump, "--truncate"}), CRIT,
               "2 unhealthy port(s)");
  EXPECT_TRUE(read_text(dump).empty());
  EXPECT_CHECK(h.run({"check-ib", "check-ufm-health", "c", "app", "--unhealthy-ports-file", dump}), OK,
               "No unhealthy ports reported by UFM.");
  EXPECT_CHECK(h.run({"check-ib", "check-ufm-health", "c", "app", "--unhealthy-ports-file", h.dir + "/absent"}), OK,
               "No unhealthy ports reported by UFM.");
}

// ---- killswitches ----

TEST(Killswitches2026, EachNewCheckHonoursItsOwnFlag) {
  struct Case {
    std::vector<std::string> cmd;
    const char* flag;
    const char* name;
  } cases[] = {
      {{"check-ib", "check-ib-counters"}, "disable_ib_port_counters", "ib port counters"},
      {{"check-ib", "check-ib-port-errors"}, "disable_check_ib_port_errors", "check ib port errors"},
      {{"check-ib", "check-mlxlink"}, "disable_check_ib_module_health", "check ib module health"},
      {{"check-ib", "check-mlxcables"}, "disable_check_ib_cable_ddm", "check ib cable ddm"},
      {{"check-ib", "check-sm-status"}, "disable_check_ib_sm_status", "check ib sm status"},
      {{"check-ib", "check-ufm-health"}, "disable_ib_ufm_health", "ib ufm health"},
      {{"check-syslogs", "mce"}, "disable_mce_errors", "mce errors"},
      {{"check-syslogs", "pcie-aer"}, "disable_pcie_aer_errors", "pcie aer errors"},
  };
  for (const auto& c : cases) {
    FakeHost h;
    h.write(h.dir + "/features.toml", std::string("[HealthChecksFeatures]\n") + c.flag + " = true\n");
    std::vector<std::string> args = {"--features-config", h.dir + "/features.toml"};
    args.insert(args.end(), c.cmd.begin(), c.cmd.end());
    args.insert(args.end(), {"c", "app", "--sink", "stdout"});
    auto r = h.run(args);
    SCOPED_TRACE(c.flag);
    EXPECT_CHECK(r, OK, std::string(c.name) + " is disabled by killswitch.");
    EXPECT_EQ(r.err.find("unknown flag"), std::string::npos) << r.err;
    auto recs = records_of(r.out);
    ASSERT_EQ(recs.size(), 1u) << r.out;
    EXPECT_EQ(recs[0]["health_check"], c.name);
  }
  // clock_policy's flag switches off that sub-check only.
  FakeHost h;
  h.write(h.dir + "/features.toml", "[HealthChecksFeatures]\ndisable_nvidia_smi_clock_policy = true\n");
  h.write(h.dir + "/scenario.json", json{{"devices", json::array({gpu(0, 1410, 1593)})}}.dump());
  auto r =
      h.run({"--features-config", h.dir + "/features.toml", "check-nvidia-smi", "c", "app", "-c", "clock_policy", "-c",
             "gpu_num", "--gpu_num", "2"},
            {"GCM_FAKE_NVML_SCENARIO=" + h.dir + "/scenario.json", std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML});
  EXPECT_CHECK(r, CRIT, "nvidia smi clock policy is disabled by killswitch.");
  EXPECT_NE(r.out.find("Number of GPUs present, 1, is different than expected, 2"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gcm::testing
