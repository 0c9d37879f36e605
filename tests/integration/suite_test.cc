// gcm prolog / epilog / healthcheck against the fake NVML and a fake scontrol (a script that records its calls and
// answers `show node` from a file): verdicts, exit codes, drain ownership, timeouts, mapping files, telemetry, and
// Slurm's minimal environment (env -i). The live-Slurm version is suite_testbed_test.cc.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "helpers.h"

namespace gcm::testing {
namespace {

using nlohmann::json;

json healthy_gpu(int i) {
  return {{"uuid", "GPU-" + std::to_string(i)},
          {"persistence_mode", 1},
          {"retired_pages", {{"single", 0}, {"double", 0}, {"pending", 0}}},
          {"ecc", {{"mode", 1}, {"volatile_corrected", 0}, {"volatile_uncorrected", 0}}},
          {"remapped_rows", {{"correctable", 0}, {"uncorrectable", 0}, {"pending", 0}, {"failure", 0}}},
          {"processes", json::array()}};
}

// A node: its fake GPUs, a fake scontrol with a node state, and a suite file.
struct Node {
  std::string dir = temp_dir("suite");
  json scenario = {{"devices", json::array({healthy_gpu(0), healthy_gpu(1)})}};
  std::string state = "IDLE";
  std::string reason;
  std::string suite_extra;  // more keys of [suite]

  Node() {
    std::ofstream(dir + "/scontrol") << "#!/bin/sh\n"
                                     << "printf '%s\\n' \"$*\" >> " << dir << "/scontrol.calls\n"
                                     << "if [ \"$1\" = show ]; then exec /bin/cat " << dir << "/node.txt; fi\n";
    ::chmod((dir + "/scontrol").c_str(), 0755);
  }
  ~Node() { std::filesystem::remove_all(dir); }

  std::string suite(const std::string& profiles) const {
    return "[suite]\n" + suite_extra + "cluster = \"testc\"\nlog_folder = \"" + dir + "/logs\"\nstate_dir = \"" + dir +
           "/state\"\ngpu_job_mapping_dir = \"" + dir +
           "/gpu-jobs\"\nsink = \"file\"\nsink_opts = [\"file_path=" + dir +
           "/telemetry.jsonl\"]\n[slurm]\nscontrol = \"" + dir + "/scontrol\"\n[environment]\n" +
           "GCM_FAKE_NVML_SCENARIO = \"" + dir + "/nvml-{node}.json\"\nGCM_NVML_LIBRARY = \"" + GCM_FAKE_NVML +
           "\"\nGCM_GPU_NODE_ID_FILE = \"" + dir + "/gpu_node_id\"\n" + profiles;
  }

  // Runs `gcm <profile>` in Slurm's minimal environment: env -i, then only what Slurm gives.
  CommandResult run(const std::string& profile, const std::string& profiles, std::vector<std::string> env = {}) {
    std::ofstream(dir + "/nvml-node1.json") << scenario.dump();
    std::ofstream(dir + "/suite.toml") << suite(profiles);
    std::ofstream(dir + "/node.txt") << "NodeName=node1 Arch=x86_64 CoresPerSocket=4\n   State=" << state
                                     << " ThreadsPerCore=1 TmpDisk=0 Weight=1\n"
                                     << (reason.empty() ? "" : "   Reason=" + reason + " [root@2026-11-29T21:00:00]\n");
    CommandSpec s;
    s.argv = {"/usr/bin/env", "-i", "SLURMD_NODENAME=node1"};
    s.argv.insert(s.argv.end(), env.begin(), env.end());
    s.argv.insert(s.argv.end(), {gcm_binary(), profile, "--suite", dir + "/suite.toml"});
    s.timeout = std::chrono::seconds(60);
    return run_command(s);
  }
  std::string calls() const { return read_text(dir + "/scontrol.calls"); }
  std::string log(const std::string& profile) const { return read_text(dir + "/logs/" + profile + "_logs/node1.log"); }
};

const char* kEccSuite = R"(
[prolog]
budget = 20
[[prolog.checks]]
name = "gpu count"
check = "check-nvidia-smi"
args = ["-c", "gpu_num"]
options = { gpu_num = 2 }
[[prolog.checks]]
name = "gpu memory errors"
check = "check-nvidia-smi"
args = ["-c", "ecc_uncorrected_volatile_total", "-c", "row_remap"]
[[prolog.checks]]
name = "tool"
command = ["/bin/sh", "-c", "echo all good; exit 0"]
[epilog]
[[epilog.checks]]
name = "gpu count"
check = "check-nvidia-smi"
args = ["-c", "gpu_num", "--gpu_num", "2"]
[healthcheck]
[[healthcheck.checks]]
name = "gpu memory errors"
check = "check-nvidia-smi"
args = ["-c", "ecc_uncorrected_volatile_total"]
)";

TEST(Suite, PrologPassesWritesMappingFilesAndEpilogRemovesThem) {
  Node n;
  auto r = n.run("prolog", kEccSuite, {"SLURM_JOB_ID=42", "SLURM_JOB_GPUS=0,1"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("OK - gpu count ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OK - tool ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gcm prolog node1: PASS - 3 checks"), std::string::npos) << r.out;
  EXPECT_EQ(read_text(n.dir + "/gpu-jobs/0"), "42\n");
  EXPECT_EQ(read_text(n.dir + "/gpu-jobs/1"), "42\n");
  EXPECT_EQ(n.calls(), "") << "the prolog must not call slurmctld unless asked to";
  // One HealthCheckLog per check and one for the suite, with the job id and the node's name.
  std::ifstream t(n.dir + "/telemetry.jsonl");
  std::vector<json> recs;
  for (std::string line; std::getline(t, line);) recs.push_back(json::parse(line));
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[0]["health_check"], "gpu count");
  EXPECT_EQ(recs[3]["health_check"], "gcm prolog");
  EXPECT_EQ(recs[3]["result"], 0);
  EXPECT_EQ(recs[1]["job_id"], 42);
  EXPECT_EQ(recs[1]["node"], "node1");

  auto e = n.run("epilog", kEccSuite, {"SLURM_JOB_ID=42", "SLURM_JOB_GPUS=0,1"});
  EXPECT_EQ(e.exit_code, 0) << e.out << e.err;
  EXPECT_FALSE(std::filesystem::exists(n.dir + "/gpu-jobs/0"));
  EXPECT_FALSE(std::filesystem::exists(n.dir + "/gpu-jobs/1"));
}

TEST(Suite, EpilogLeavesAnotherJobsMappingFile) {
  Node n;
  std::filesystem::create_directories(n.dir + "/gpu-jobs");
  std::ofstream(n.dir + "/gpu-jobs/0") << "7\n";
  std::ofstream(n.dir + "/gpu-jobs/1") << "42\n";
  auto e = n.run("epilog", kEccSuite, {"SLURM_JOB_ID=42"});  // no GPU variable: every file holding 42 goes
  EXPECT_EQ(e.exit_code, 0) << e.out << e.err;
  EXPECT_EQ(read_text(n.dir + "/gpu-jobs/0"), "7\n");
  EXPECT_FALSE(std::filesystem::exists(n.dir + "/gpu-jobs/1"));
}

TEST(Suite, PrologFailureExitsOneAndRecordsItWithoutCallingScontrol) {
  Node n;
  n.scenario["devices"][1]["ecc"]["volatile_uncorrected"] = 1;
  auto r = n.run("prolog", kEccSuite, {"SLURM_JOB_ID=43", "SLURM_JOB_GPUS=0,1"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("CRITICAL - gpu memory errors ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OK - gpu count ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FAIL - 3 checks, 1 failed (gpu memory errors)"), std::string::npos) << r.out;
  EXPECT_EQ(n.calls(), "");
  EXPECT_FALSE(std::filesystem::exists(n.dir + "/gpu-jobs/1")) << "no mapping for a job that will not run";
  EXPECT_EQ(read_text(n.dir + "/state/node1.failed"), "Prolog error\n");
  // The failed job's epilog fails too: both of Slurm's reasons count as gcm's, whichever Slurm keeps.
  EXPECT_EQ(n.run("epilog", R"(
[epilog]
[[epilog.checks]]
name = "gpu memory errors"
check = "check-nvidia-smi"
args = ["-c", "ecc_uncorrected_volatile_total"]
)",
                  {"SLURM_JOB_ID=43"})
                .exit_code,
            1);
  EXPECT_EQ(read_text(n.dir + "/state/node1.failed"), "Prolog error\nEpilog error\n");
}

TEST(Suite, HealthcheckDrainsWithGcmReasonInAMinimalEnvironment) {
  Node n;
  n.scenario["devices"][1]["ecc"]["volatile_uncorrected"] = 3;
  auto r = n.run("healthcheck", kEccSuite);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(n.calls().find("show node node1\n"), std::string::npos) << n.calls();
  EXPECT_NE(n.calls().find("update NodeName=node1 State=DRAIN Reason=gcm: gpu memory errors: "
                           "ecc_uncorrected_volatile_total check: GPU 1: 3 volatile ECC errors"),
            std::string::npos)
      << n.calls();
}

TEST(Suite, HealthcheckDoesNotTouchAReasonGcmDidNotSet) {
  Node n;
  n.state = "IDLE+DRAIN";
  n.reason = "maintenance by hand";
  auto healthy = n.run("healthcheck", kEccSuite);
  EXPECT_EQ(healthy.exit_code, 0) << healthy.out << healthy.err;
  n.scenario["devices"][0]["ecc"]["volatile_uncorrected"] = 1;
  auto failing = n.run("healthcheck", kEccSuite);
  EXPECT_EQ(failing.exit_code, 1);
  EXPECT_EQ(n.calls().find("update"), std::string::npos) << n.calls();
  std::string log = n.log("healthcheck");
  EXPECT_NE(log.find("is drained with a reason gcm did not set ('maintenance by hand'): not resuming"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("already carries the reason 'maintenance by hand'"), std::string::npos) << log;
  // A node that is down with a reason (not drained) is not drained over it either.
  n.state = "DOWN*";
  n.reason = "Not responding";
  n.run("healthcheck", kEccSuite);
  EXPECT_EQ(n.calls().find("update"), std::string::npos) << n.calls();
}

TEST(Suite, HealthcheckResumesOnlyWhatGcmDrained) {
  Node n;
  n.state = "IDLE+DRAIN";
  n.reason = "gcm: gpu memory errors: ecc_uncorrected_volatile_total check: GPU 1: 1 volatile ECC errors";
  auto r = n.run("healthcheck", kEccSuite);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(n.calls().find("update NodeName=node1 State=RESUME"), std::string::npos) << n.calls();
  EXPECT_NE(r.out.find("resumed node node1"), std::string::npos) << r.out;
}

TEST(Suite, HealthcheckAdoptsSlurmsPrologErrorOnlyAfterGcmsPrologFailed) {
  Node n;
  n.state = "IDLE+DRAIN";
  n.reason = "Prolog error";
  auto foreign = n.run("healthcheck", kEccSuite);  // no failure of gcm's prolog recorded: someone else's
  EXPECT_EQ(foreign.exit_code, 0);
  EXPECT_EQ(n.calls().find("update"), std::string::npos) << n.calls();

  n.scenario["devices"][1]["ecc"]["volatile_uncorrected"] = 1;
  EXPECT_EQ(n.run("prolog", kEccSuite, {"SLURM_JOB_ID=44"}).exit_code, 1);
  EXPECT_EQ(n.run("epilog", kEccSuite, {"SLURM_JOB_ID=44"}).exit_code, 0) << "its epilog checks only the count";
  auto still_bad = n.run("healthcheck", kEccSuite);  // gcm's prolog failed: the reason becomes gcm's own
  EXPECT_EQ(still_bad.exit_code, 1);
  EXPECT_NE(n.calls().find("update NodeName=node1 State=DRAIN Reason=gcm: gpu memory errors: "), std::string::npos)
      << n.calls();
  n.scenario["devices"][1]["ecc"]["volatile_uncorrected"] = 0;
  auto healed = n.run("healthcheck", kEccSuite);
  EXPECT_EQ(healed.exit_code, 0);
  EXPECT_NE(n.calls().find("update NodeName=node1 State=RESUME"), std::string::npos) << n.calls();
  EXPECT_FALSE(std::filesystem::exists(n.dir + "/state/node1.failed"));
}

TEST(Suite, AHungBuiltInCheckIsKilledAtItsTimeoutAndNamedInTheReason) {
  Node n;
  // The NVML call never returns, and the check's own NVML timeout is longer than the suite's timeout for it.
  n.scenario["devices"][1]["delays"] = {{"nvmlDeviceGetTotalEccErrors", {{"hang", true}}}};
  const char* suite = R"(
[healthcheck]
budget = 3
[[healthcheck.checks]]
name = "gpu count"
check = "check-nvidia-smi"
args = ["-c", "gpu_num", "--gpu_num", "2"]
[[healthcheck.checks]]
name = "ecc"
check = "check-nvidia-smi"
args = ["-c", "ecc_uncorrected_volatile_total", "--nvml-timeout", "600"]
timeout = 1
[[healthcheck.checks]]
name = "slow tool"
command = ["/bin/sleep", "600"]
timeout = 100
severity = "warn"
)";
  auto r = n.run("healthcheck", suite);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("OK - gpu count ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TIMEOUT - ecc ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("timed out: killed after its 1 s timeout"), std::string::npos) << r.out;
  // The budget ends the tool that would outlive it; severity warn: reported, does not drain.
  EXPECT_NE(r.out.find("TIMEOUT - slow tool ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("killed when the healthcheck budget of 3 s ran out"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 failed (ecc)"), std::string::npos) << r.out;
  EXPECT_NE(n.calls().find("Reason=gcm: ecc: timed out: killed after its 1 s timeout"), std::string::npos) << n.calls();
}

TEST(Suite, BuiltInChecksShareOneProcessAndAnInterruptedOneRunsAgainAlone) {
  Node n;
  // Every NVML call that counts the GPUs takes 1.5 s; "ecc" has only 1 s and is killed, with the process it shares
  // with "gpu count", which then runs again in a process of its own and passes.
  n.scenario["delays"] = {{"nvmlDeviceGetCount_v2", {{"ms", 1500}}}};
  const char* suite = R"(
[healthcheck]
budget = 10
[[healthcheck.checks]]
name = "gpu count"
check = "check-nvidia-smi"
args = ["-c", "gpu_num", "--gpu_num", "2"]
timeout = 8
[[healthcheck.checks]]
name = "ecc"
check = "check-nvidia-smi"
args = ["-c", "ecc_uncorrected_volatile_total"]
timeout = 1
)";
  auto r = n.run("healthcheck", suite);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("TIMEOUT - ecc ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("OK - gpu count ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 failed (ecc)"), std::string::npos) << r.out;
  EXPECT_NE(n.log("healthcheck")
                .find("gpu count: did not finish (the process it shared was killed when another check "
                      "overran); running it again in a process of its own"),
            std::string::npos)
      << n.log("healthcheck");
}

TEST(Suite, BuiltInChecksSharingAProcessGetVerdictsOfTheirOwn) {
  Node n;
  // One check fails, the other passes, in the same process: each keeps its own verdict and nothing runs again.
  n.scenario["devices"][1]["ecc"]["volatile_uncorrected"] = 3;
  const char* suite = R"(
[healthcheck]
budget = 10
[[healthcheck.checks]]
name = "gpu count"
check = "check-nvidia-smi"
args = ["-c", "gpu_num", "--gpu_num", "2"]
[[healthcheck.checks]]
name = "ecc"
check = "check-nvidia-smi"
args = ["-c", "ecc_uncorrected_volatile_total"]
)";
  auto r = n.run("healthcheck", suite);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("OK - gpu count ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CRITICAL - ecc ["), std::string::npos) << r.out;
  EXPECT_EQ(n.log("healthcheck").find("running it again"), std::string::npos) << n.log("healthcheck");
}

TEST(Suite, CommandsUseNagiosExitCodesOrZeroOk) {
  Node n;
  const char* suite = R"(
[prolog]
[[prolog.checks]]
name = "warns"
command = ["/bin/sh", "-c", "echo disk at 81%; exit 1"]
[[prolog.checks]]
name = "strict warns"
command = ["/bin/sh", "-c", "echo disk at 81%; exit 1"]
fail_on = "warning"
[[prolog.checks]]
name = "zero ok"
command = ["/bin/sh", "-c", "echo broken >&2; exit 1"]
exit_codes = "zero-ok"
[[prolog.checks]]
name = "missing"
command = ["/nonexistent/tool"]
)";
  auto r = n.run("prolog", suite);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("WARNING - warns ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(". disk at 81%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CRITICAL - zero ok ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exit 1: broken"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("UNKNOWN - missing ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cannot run '/nonexistent/tool'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 failed (strict warns, zero ok)"), std::string::npos) << r.out;
}

TEST(Suite, BadSuitesAreUsageErrorsNamingTheEntry) {
  Node n;
  auto unknown = n.run("prolog",
                       "[prolog]\n[[prolog.checks]]\ncheck = \"check-nvidia-smi\"\nargs = [\"-c\", "
                       "\"gpu_num\"]\n[[prolog.checks]]\nname = \"disk\"\ncheck = \"check-nope "
                       "no-such-check\"\n");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("[[prolog.checks]] #2 (line "), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("): unknown check 'check-nope no-such-check' for 'disk' (checks in this build: "),
            std::string::npos)
      << unknown.err;
  auto bad_option = n.run("prolog",
                          "[prolog]\n[[prolog.checks]]\ncheck = \"check-nvidia-smi\"\n"
                          "options = { gpu_count = 8 }\n");
  EXPECT_EQ(bad_option.exit_code, 2);
  EXPECT_NE(bad_option.err.find("'gpu_count' is not an option of 'check-nvidia-smi'"), std::string::npos)
      << bad_option.err;
  auto bad_arg = n.run("prolog",
                       "[prolog]\n[[prolog.checks]]\ncheck = \"check-nvidia-smi\"\n"
                       "args = [\"-c\", \"gpu_nmu\"]\n");
  EXPECT_EQ(bad_arg.exit_code, 2);
  EXPECT_NE(bad_arg.err.find("args of 'check-nvidia-smi'"), std::string::npos) << bad_arg.err;
  auto no_profile = n.run("epilog", "[prolog]\n");
  EXPECT_EQ(no_profile.exit_code, 2);
  EXPECT_NE(no_profile.err.find("has no [epilog] table"), std::string::npos) << no_profile.err;
}

// features_config of a suite: a directory is a usage error (it once left every check enabled with a log line); a
// file that is not TOML is GCM's fallback (every check enabled), said on stderr and in every telemetry record.
TEST(Suite, KillswitchFileDirectoryIsAUsageErrorAndBadTomlIsInTheTelemetry) {
  Node n;
  n.suite_extra = "features_config = \"" + n.dir + "\"\n";
  auto dir = n.run("prolog", kEccSuite);
  EXPECT_EQ(dir.exit_code, 2) << dir.out << dir.err;
  EXPECT_NE(dir.err.find("features config " + n.dir + " is a directory"), std::string::npos) << dir.err;
  std::ofstream(n.dir + "/broken.toml") << "[HealthChecksFeatures\ndisable_nvidia_smi = true\n";
  n.suite_extra = "features_config = \"" + n.dir + "/broken.toml\"\n";
  auto broken = n.run("prolog", kEccSuite);
  EXPECT_EQ(broken.exit_code, 0) << broken.out << broken.err;
  EXPECT_NE(broken.err.find("Warning: features config " + n.dir + "/broken.toml:1:"), std::string::npos) << broken.err;
  std::string telemetry = read_text(n.dir + "/telemetry.jsonl");
  EXPECT_NE(telemetry.find("\\nWARNING: features config " + n.dir + "/broken.toml"), std::string::npos) << telemetry;
}

TEST(Suite, ValidatePrintsThePlanAndRunsNothing) {
  Node n;
  std::ofstream(n.dir + "/suite.toml") << n.suite(kEccSuite);
  auto r = run_gcm({"prolog", "--validate", "--suite", n.dir + "/suite.toml"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("prolog: 3 checks, budget 20 s, drain false"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpu memory errors: check-nvidia-smi -c ecc_uncorrected_volatile_total -c row_remap "
                       "[timeout 10 s, severity drain]"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(n.dir + "/telemetry.jsonl"));
}

TEST(Suite, ProgramNamesReachTheRunnersWithTheSuiteFromTheEnvironment) {
  Node n;
  std::ofstream(n.dir + "/suite.toml") << n.suite(kEccSuite);
  std::ofstream(n.dir + "/nvml-node1.json") << n.scenario.dump();
  std::filesystem::create_symlink(gcm_binary(), n.dir + "/gcm-prolog");
  CommandSpec s;
  s.argv = {"/usr/bin/env", "-i", "SLURMD_NODENAME=node1", "GCM_SUITE=" + n.dir + "/suite.toml", n.dir + "/gcm-prolog"};
  auto r = run_command(s);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("gcm prolog node1: PASS"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gcm::testing
