// The judgement of the InfiniBand checks of GCM's 2026 additions, on the fixtures of tests/fixtures/health_checks
// (written from the tools' documentation: see its README): check-ib-counters' counters, ibdiagnet's PM file,
// mlxlink, mlxcables, sminfo and UFM's unhealthy-ports dump.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "health/ib_counters.h"
#include "health/ib_fabric_output.h"

namespace gcm::health {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health_checks/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

IbPortCounters port(const std::string& dev, std::vector<std::pair<std::string, uint64_t>> errors) {
  IbPortCounters p;
  p.device = dev;
  p.port = "1";
  p.errors = std::move(errors);
  p.throughput = {{"port_xmit_data", 42}};
  return p;
}

// ---- check-ib-counters ----

TEST(IbCounters, NoPortIsWarning) {
  auto v = evaluate_ib_counters({}, 0, 100, {"link_downed"});
  EXPECT_EQ(v.code, ExitCode::WARN);
  EXPECT_EQ(v.msg, "No IB ports discovered");
}

TEST(IbCounters, CleanPortsAreOkWithMetrics) {
  auto v = evaluate_ib_counters({port("mlx5_0", {{"symbol_error", 0}, {"link_downed", 0}})}, 0, 100, {"link_downed"});
  EXPECT_EQ(v.code, ExitCode::OK);
  EXPECT_EQ(v.msg,
            "1 ports checked, 0 with errors, total_errors=0 | 'total_errors'=0;0;100 'ports_with_errors'=0 "
            "'ports_checked'=1\n| 'mlx5_0/1.symbol_error'=0;0;100 'mlx5_0/1.link_downed'=0;0;100 "
            "'mlx5_0/1.port_xmit_data'=42");
}

TEST(IbCounters, TotalAboveWarnIsWarningAboveCritIsCritical) {
  std::vector<IbPortCounters> ports = {port("mlx5_0", {{"symbol_error", 3}, {"port_rcv_errors", 2}}),
                                       port("mlx5_1", {{"symbol_error", 0}})};
  auto warn = evaluate_ib_counters(ports, 0, 100, {"link_downed"});
  EXPECT_EQ(warn.code, ExitCode::WARN);
  EXPECT_NE(warn.msg.find("2 ports checked, 1 with errors, total_errors=5"), std::string::npos) << warn.msg;
  EXPECT_NE(warn.msg.find("\nmlx5_0/1: symbol_error=3; port_rcv_errors=2\n"), std::string::npos) << warn.msg;
  EXPECT_EQ(evaluate_ib_counters(ports, 5, 100, {}).code, ExitCode::OK);  // not above the threshold
  EXPECT_EQ(evaluate_ib_counters(ports, 0, 4, {}).code, ExitCode::CRITICAL);
}

TEST(IbCounters, ACriticalCounterAboveZeroIsCriticalWhateverTheTotal) {
  std::vector<IbPortCounters> ports = {port("mlx5_0", {{"link_downed", 1}})};
  EXPECT_EQ(evaluate_ib_counters(ports, 10, 100, {"link_downed"}).code, ExitCode::CRITICAL);
  EXPECT_EQ(evaluate_ib_counters(ports, 10, 100, {"symbol_error"}).code, ExitCode::OK);
}

TEST(IbCounters, AnUnreadableCounterIsNamedAndWarns) {
  auto p = port("mlx5_0", {{"symbol_error", 0}});
  p.unreadable = {"counters/link_downed: 'x' is not a non-negative integer"};
  auto v = evaluate_ib_counters({p}, 0, 100, {"link_downed"});
  EXPECT_EQ(v.code, ExitCode::WARN);
  EXPECT_NE(v.msg.find("unreadable counter mlx5_0/1: counters/link_downed: 'x'"), std::string::npos) << v.msg;
}

TEST(IbCounters, HugeCountersSaturateInsteadOfWrapping) {
  std::vector<IbPortCounters> ports = {port("mlx5_0", {{"symbol_error", UINT64_MAX}, {"port_rcv_errors", 2}})};
  auto v = evaluate_ib_counters(ports, 0, 100, {});
  EXPECT_EQ(v.code, ExitCode::CRITICAL);
  EXPECT_NE(v.msg.find("total_errors=18446744073709551615"), std::string::npos) << v.msg;
}

// ---- check-ib-port-errors ----

TEST(IbdiagnetPm, ErrorsLargestFirstWithSwitchNamesFromIbnetdiscover) {
  auto v = evaluate_ibdiagnet_pm(fixture("ibdiagnet2_errors.pm"), fixture("ibdiagnet2.ibnetdiscover"), 0);
  EXPECT_EQ(v.code, ExitCode::CRITICAL);
  // port_xmit_discard_extended is not one of GCM's counters; the NA counter is skipped; an unknown switch GUID is
  // named Unknown[...].
  EXPECT_EQ(v.msg,
            "4 port error(s) detected:\n"
            "leaf-a01/P17: symbol_error_counter=200\n"
            "spine-b07/P33: port_rcv_remote_physical_errors=17\n"
            "leaf-a01/P17: link_error_recovery_counter=2\n"
            "Unknown[b8cef60300e4a0ff]/P5: port_rcv_errors=1");
}

TEST(IbdiagnetPm, ThresholdCleanEmptyAndMissingBlocks) {
  auto pm = fixture("ibdiagnet2_errors.pm");
  auto v = evaluate_ibdiagnet_pm(pm, "", 17);
  EXPECT_EQ(v.code, ExitCode::CRITICAL);
  EXPECT_EQ(v.msg, "1 port error(s) detected:\nUnknown[b8cef60300e4a010]/P17: symbol_error_counter=200");
  auto clean = evaluate_ibdiagnet_pm(fixture("ibdiagnet2_clean.pm"), "", 0);
  EXPECT_EQ(clean.code, ExitCode::OK);
  EXPECT_EQ(clean.msg, "No port errors above threshold (0).");
  EXPECT_EQ(evaluate_ibdiagnet_pm(" \n", "", 0).msg, "PM file is empty");
  auto no_block = evaluate_ibdiagnet_pm("symbol_error_counter_extended=0x1\n", "", 0);
  EXPECT_EQ(no_block.code, ExitCode::WARN);
  EXPECT_EQ(no_block.msg, "No port data found in PM file");
}

TEST(IbdiagnetPm, AValueThatIsNotHexIsNamedWithItsLine) {
  auto v = evaluate_ibdiagnet_pm("Port=1 Lid=0x1 Port Name=h1/U1\nport_rcv_errors_extended=zz\n", "", 0);
  EXPECT_EQ(v.code, ExitCode::WARN);
  EXPECT_NE(v.msg.find("line 2: port_rcv_errors_extended=zz"), std::string::npos) << v.msg;
}

// ---- check-mlxlink ----

TEST(Mlxlink, HealthyModuleHasNoIssue) {
  std::vector<std::string> issues;
  EXPECT_EQ(evaluate_mlxlink_module("/dev/mst/mt4129_pciconf0", fixture("mlxlink_m_healthy.txt"), 0, {}, issues),
            ExitCode::OK);
  EXPECT_TRUE(issues.empty()) << issues.front();
}

TEST(Mlxlink, LaneFaultsStatesAndDdmRanges) {
  std::vector<std::string> issues;
  std::string d = "/dev/mst/mt4129_pciconf0";
  EXPECT_EQ(evaluate_mlxlink_module(d, fixture("mlxlink_m_rx_los.txt"), 0, {}, issues), ExitCode::CRITICAL);
  std::vector<std::string> want = {
      d + ": DataPath state=DPActivated,DPActivated,DPDeactivated,DPActivated",
      d + ": Rx LOS=[0, 0, 1, 0]",
      d + ": Tx CDR LOL=[1, 0, 0, 0]",
      d + ": Bias Current=[8.602, 11.75, 8.612, 8.54] outside [6.25..10.5]",
  };
  EXPECT_EQ(issues, want);
}

TEST(Mlxlink, WarnOnlyFlagsAndDdmCanBeTurnedOff) {
  std::string out = fixture("mlxlink_m_rx_los.txt");
  MlxlinkRules rules;
  rules.critical_flags = {};
  rules.check_ddm_ranges = false;
  std::vector<std::string> issues;
  // Still CRITICAL: the DataPath state is not a flag.
  EXPECT_EQ(evaluate_mlxlink_module("d", out, 0, rules, issues), ExitCode::CRITICAL);
  EXPECT_EQ(issues.size(), 2u);
  std::string healthy_but_lol = fixture("mlxlink_m_healthy.txt");
  const std::string lol = "Rx CDR LOL [per lane]              : 0,0,0,0";
  ASSERT_NE(healthy_but_lol.find(lol), std::string::npos);
  healthy_but_lol.replace(healthy_but_lol.find(lol), lol.size(), "Rx CDR LOL [per lane]              : 0,1,0,0");
  issues.clear();
  EXPECT_EQ(evaluate_mlxlink_module("d", healthy_but_lol, 0, {}, issues), ExitCode::WARN);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0], "d: Rx CDR LOL=[0, 1, 0, 0]");
}

TEST(Mlxlink, ModuleNotReadyAndToolFailure) {
  std::vector<std::string> issues;
  EXPECT_EQ(evaluate_mlxlink_module("d", "Module State                       : Low Power state\n", 0, {}, issues),
            ExitCode::CRITICAL);
  EXPECT_EQ(issues.at(0), "d: Module State=Low Power state");
  issues.clear();
  EXPECT_EQ(evaluate_mlxlink_module("d", "", 3, {}, issues), ExitCode::WARN);
  EXPECT_EQ(issues.at(0), "d: mlxlink failed (rc=3)");
}

// ---- check-mlxcables ----

TEST(Mlxcables, AlarmOrWarningWordsWarn) {
  auto ok = evaluate_mlxcables_ddm("c0", fixture("mlxcables_ddm_ok.txt"), 0);
  EXPECT_EQ(ok.code, ExitCode::OK);
  EXPECT_EQ(ok.msg, "c0: healthy");
  auto alarm = evaluate_mlxcables_ddm("c0", fixture("mlxcables_ddm_alarm.txt"), 0);
  EXPECT_EQ(alarm.code, ExitCode::WARN);
  EXPECT_EQ(alarm.msg, "c0: DDM ALARM detected");
  EXPECT_EQ(evaluate_mlxcables_ddm("c0", "Rx power warning threshold exceeded", 0).msg, "c0: DDM WARNING detected");
  EXPECT_EQ(evaluate_mlxcables_ddm("c0", "ALARMS_OFF WARNINGS", 0).code, ExitCode::OK);  // whole words only
  EXPECT_EQ(evaluate_mlxcables_ddm("c0", "", 1).msg, "c0: mlxcables failed (rc=1)");
}

// ---- check-sm-status ----

TEST(Sminfo, MasterStandbyUnreachableUnreadable) {
  auto master = evaluate_sminfo(fixture("sminfo_master.txt"), 0);
  EXPECT_EQ(master.code, ExitCode::OK);
  EXPECT_EQ(master.msg, "SM reachable, state SMINFO_MASTER");
  auto standby = evaluate_sminfo(fixture("sminfo_standby.txt"), 0);
  EXPECT_EQ(standby.code, ExitCode::WARN);
  EXPECT_EQ(standby.msg, "SM reachable but in state SMINFO_STANDBY (expected MASTER)");
  auto down = evaluate_sminfo("ibwarn: [1234] mad_rpc_open_port: can't open UMAD port ((null):0)\n", 255);
  EXPECT_EQ(down.code, ExitCode::CRITICAL);
  EXPECT_EQ(down.msg,
            "SM unreachable (sminfo rc=255): ibwarn: [1234] mad_rpc_open_port: can't open UMAD port "
            "((null):0)");
  EXPECT_EQ(evaluate_sminfo("sminfo: restated 3 MASTER", 0).code, ExitCode::WARN);  // "state" must be a word
}

// ---- check-ufm-health ----

TEST(UfmHealth, UnhealthyPortsAreCriticalFirstTwentyShown) {
  auto v = evaluate_ufm_unhealthy_ports(fixture("ufm_unhealthy_ports.dump"));
  EXPECT_EQ(v.code, ExitCode::CRITICAL);
  EXPECT_EQ(v.msg.substr(0, v.msg.find('\n')), "2 unhealthy port(s) reported by UFM:");
  EXPECT_NE(v.msg.find("{FLAPPING}"), std::string::npos);
  EXPECT_EQ(evaluate_ufm_unhealthy_ports("# NodeGUID, PortNum\n").code, ExitCode::OK);
  EXPECT_EQ(evaluate_ufm_unhealthy_ports("").msg, "No unhealthy ports reported by UFM.");
  std::string many = "# header\n";
  for (int i = 0; i < 25; ++i) many += "0x" + std::to_string(i) + ", 1, \"sw\", 0x1, 1, \"h\", {FLAPPING}, now\n";
  auto m = evaluate_ufm_unhealthy_ports(many);
  EXPECT_NE(m.msg.find("25 unhealthy port(s)"), std::string::npos);
  EXPECT_NE(m.msg.find("\n... (5 more)"), std::string::npos) << m.msg;
  EXPECT_EQ(m.msg.find("0x20,"), std::string::npos) << m.msg;  // the 21st is not shown
}

}  // namespace
}  // namespace gcm::health
