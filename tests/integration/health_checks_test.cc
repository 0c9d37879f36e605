// health_checks end to end: the framework (output line per TYPE, telemetry record, killswitches, config tables,
// usage errors) and check-nvidia-smi's sub-checks against the fake NVML.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "helpers.h"

namespace gcm::testing {
namespace {

using nlohmann::json;

json healthy_gpu(int i) {
  return {{"uuid", "GPU-" + std::to_string(i)},
          {"vbios_version", "96.00.89.00.01"},
          {"app_clocks", {{"graphics", 1410}, {"mem", 1593}}},
          {"temperature", 40},
          {"memory", {{"total", 85899345920ll}, {"used", 1048576}}},
          {"retired_pages", {{"single", 0}, {"double", 0}, {"pending", 0}}},
          {"ecc", {{"mode", 1}, {"volatile_corrected", 10}, {"volatile_uncorrected", 0}}},
          {"remapped_rows", {{"correctable", 0}, {"uncorrectable", 0}, {"pending", 0}, {"failure", 0}}},
          {"processes", json::array()}};
}

struct Host {
  std::string dir = temp_dir("hc");
  json scenario = {{"devices", json::array()}};
  explicit Host(int gpus = 2) {
    for (int i = 0; i < gpus; ++i) scenario["devices"].push_back(healthy_gpu(i));
  }
  ~Host() { std::filesystem::remove_all(dir); }
  CommandResult run(std::vector<std::string> args, std::vector<std::string> extra_env = {}) {
    std::ofstream(dir + "/scenario.json") << scenario.dump();
    std::vector<std::string> env = {"GCM_FAKE_NVML_SCENARIO=" + dir + "/scenario.json",
                                    std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML,
                                    "GCM_GPU_NODE_ID_FILE=" + dir + "/gpu_node_id",
                                    "SLURM_JOB_ID=",
                                    "SLURM_JOB_GPUS=",
                                    "CUDA_VISIBLE_DEVICES="};
    for (const auto& e : extra_env) {  // an explicit value replaces the default one
      std::string key = e.substr(0, e.find('=') + 1);
      env.erase(std::remove_if(env.begin(), env.end(), [&](const std::string& x) { return x.rfind(key, 0) == 0; }),
                env.end());
      env.push_back(e);
    }
    std::vector<std::string> argv = {"health_checks"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--log-folder", dir + "/logs"});
    CommandSpec s;
    s.argv = {std::string(GCM_BINARY).substr(0, std::string(GCM_BINARY).rfind('/')) + "/health_checks"};
    s.argv.insert(s.argv.end(), argv.begin() + 1, argv.end());
    s.timeout = std::chrono::seconds(60);
    s.extra_env = env;
    return run_command(s);
  }
};

TEST(HealthChecks, HealthyGpusPassEverySubCheck) {
  Host h(8);
  auto r = h.run({"check-nvidia-smi",
                  "c",
                  "nagios",
                  "-c",
                  "gpu_num",
                  "-c",
                  "clock_freq",
                  "-c",
                  "running_procs",
                  "-c",
                  "gpu_temperature",
                  "--gpu_temperature_threshold",
                  "80",
                  "-c",
                  "gpu_mem_usage",
                  "-c",
                  "gpu_retired_pages",
                  "-c",
                  "ecc_uncorrected_volatile_total",
                  "-c",
                  "ecc_corrected_volatile_total",
                  "-c",
                  "vbios_mismatch",
                  "-c",
                  "row_remap",
                  "-c",
                  "row_remap_pending",
                  "-c",
                  "row_remap_failed",
                  "--app"});
  // "--app" is not an option: a usage error, exit 2, naming it.
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--app"), std::string::npos) << r.err;
  r = h.run({"check-nvidia-smi",
             "c",
             "nagios",
             "-c",
             "gpu_num",
             "-c",
             "clock_freq",
             "-c",
             "running_procs",
             "-c",
             "gpu_temperature",
             "--gpu_temperature_threshold",
             "80",
             "-c",
             "gpu_mem_usage",
             "-c",
             "gpu_retired_pages",
             "-c",
             "ecc_uncorrected_volatile_total",
             "-c",
             "ecc_corrected_volatile_total",
             "-c",
             "vbios_mismatch",
             "-c",
             "row_remap",
             "-c",
             "row_remap_pending",
             "-c",
             "row_remap_failed",
             "--sink",
             "stdout"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto recs = records_of(r.out);
  ASSERT_EQ(recs.size(), 12u) << r.out;  // one record per sub-check, in the fixed order
  EXPECT_EQ(recs[0]["health_check"], "nvidia smi gpu_num");
  EXPECT_EQ(recs[1]["health_check"], "nvidia smi clock_freq");
  EXPECT_EQ(recs[3]["health_check"], "nvidia smi gpu_temp");
  EXPECT_EQ(recs[8]["health_check"], "nvidia smi bios version mismatch");
  EXPECT_EQ(recs[11]["health_check"], "nvidia smi row_remap_failed");
  for (const auto& x : recs) {
    EXPECT_EQ(x["result"], 0) << x;
    EXPECT_EQ(x["type"], "nagios");
    EXPECT_EQ(x["cluster"], "c");
    EXPECT_TRUE(x["gpu_node_id"].is_string()) << x;
  }
  EXPECT_NE(r.out.find("OK - nvidia smi\n"), std::string::npos) << r.out;
}

TEST(HealthChecks, EachSubCheckFailsOnItsCondition) {
  struct Case {
    std::string check;
    std::function<void(json&)> break_gpu;
    std::vector<std::string> extra;
    std::string expect_in_msg;
  };
  std::vector<Case> cases = {
      {"gpu_num",
       [](json&) {},
       {"--gpu_num", "4"},
       "gpu_num check: exit_code: ExitCode.CRITICAL, Number of GPUs present, 2, is different than expected, 4"},
      {"clock_freq", [](json& g) { g["app_clocks"]["graphics"] = 1000; }, {}, "graphics 1000 MHz"},
      {"gpu_temperature", [](json& g) { g["temperature"] = 91; }, {"--gpu_temperature_threshold", "85"}, "91 C"},
      {"gpu_mem_usage", [](json& g) { g["memory"]["used"] = 100 << 20; }, {}, "100 MiB"},
      {"gpu_retired_pages", [](json& g) { g["retired_pages"]["pending"] = 1; }, {}, "pending 1"},
      {"gpu_retired_pages", [](json& g) { g["retired_pages"]["double"] = 11; }, {}, "11 double-bit"},
      {"ecc_uncorrected_volatile_total", [](json& g) { g["ecc"]["volatile_uncorrected"] = 1; }, {}, "1 volatile"},
      {"ecc_corrected_volatile_total", [](json& g) { g["ecc"]["volatile_corrected"] = 60000000; }, {}, "60000000"},
      {"vbios_mismatch", [](json& g) { g["vbios_version"] = "96.00.99.00.01"; }, {}, "96.00.99.00.01"},
      {"row_remap", [](json& g) { g["remapped_rows"]["failure"] = 1; }, {}, "failed 1"},
      {"row_remap_pending", [](json& g) { g["remapped_rows"]["pending"] = 1; }, {}, "pending"},
      {"row_remap_failed", [](json& g) { g["remapped_rows"]["failure"] = 1; }, {}, "failed"},
  };
  for (const auto& c : cases) {
    Host h(2);
    c.break_gpu(h.scenario["devices"][1]);
    std::vector<std::string> args = {"check-nvidia-smi", "c", "app", "-c", c.check};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    auto r = h.run(args);
    EXPECT_EQ(r.exit_code, 2) << c.check << ": " << r.out << r.err;
    EXPECT_EQ(r.out.rfind("CRITICAL - nvidia smi. ", 0), 0u) << c.check << ": " << r.out;
    EXPECT_NE(r.out.find(c.expect_in_msg), std::string::npos) << c.check << ": " << r.out;
    if (c.check != "gpu_num" && c.check != "vbios_mismatch") {
      EXPECT_NE(r.out.find("GPU 1"), std::string::npos) << c.check << ": " << r.out;
      EXPECT_EQ(r.out.find("GPU 0"), std::string::npos) << c.check << ": " << r.out;
    }
  }
}

TEST(HealthChecks, NvmlErrorsMapToTheReferenceLevels) {
  Host h(2);
  h.scenario["devices"][0]["errors"] = {{"nvmlDeviceGetTotalEccErrors", "GPU_IS_LOST"}};
  h.scenario["devices"][1]["errors"] = {{"nvmlDeviceGetRemappedRows", "NOT_SUPPORTED"}};
  auto lost = h.run({"check-nvidia-smi", "c", "app", "-c", "ecc_uncorrected_volatile_total"});
  EXPECT_EQ(lost.exit_code, 2) << lost.out;
  EXPECT_NE(lost.out.find("GPU is lost"), std::string::npos) << lost.out;
  auto unsupported = h.run({"check-nvidia-smi", "c", "app", "-c", "row_remap"});
  EXPECT_EQ(unsupported.exit_code, 1) << unsupported.out;
  EXPECT_NE(unsupported.out.find("WARNING - nvidia smi"), std::string::npos) << unsupported.out;
  // A hung GPU: CRITICAL within the timeout, not a hung prolog.
  Host hung(2);
  hung.scenario["devices"][1]["delays"] = {{"nvmlDeviceGetTemperature", {{"hang", true}}}};
  auto r = hung.run({"check-nvidia-smi", "c", "app", "-c", "gpu_temperature", "--gpu_temperature_threshold", "90",
                     "--nvml-timeout", "0.3"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("did not return within 300 ms"), std::string::npos) << r.out;
  // No driver: the reference's LIBRARY_NOT_FOUND level (WARNING) and one record named "nvidia smi".
  auto none =
      h.run({"check-nvidia-smi", "c", "app", "-c", "gpu_num", "--nvml-library", "/nonexistent.so", "--sink", "stdout"});
  EXPECT_EQ(none.exit_code, 1) << none.out;
  auto recs = records_of(none.out);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0]["health_check"], "nvidia smi");
  EXPECT_EQ(recs[0]["result"], 1);
}

// A hang in GPU 1's handle lookup was reported by the next sub-check as "GPU 0: NVML is still stuck", and one in the
// device count as GPU 0's: the call that hangs and its GPU are named.
TEST(HealthChecks, AHungCallIsNamedWithItsGpuInTheSubChecksAfterIt) {
  Host hung(2);
  hung.scenario["devices"][1]["delays"] = {{"nvmlDeviceGetHandleByIndex_v2", {{"hang", true}}}};
  auto r = hung.run({"check-nvidia-smi", "c", "app", "-c", "gpu_temperature", "--gpu_temperature_threshold", "90", "-c",
                     "gpu_mem_usage", "--nvml-timeout", "0.3"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("GPU 1: nvmlDeviceGetHandleByIndex_v2 did not return within 300 ms"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("NVML is still stuck in nvmlDeviceGetHandleByIndex_v2 (GPU 1, no answer after 300 ms)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("an earlier call"), std::string::npos) << r.out;
  Host count(2);
  count.scenario["delays"] = {{"nvmlDeviceGetCount_v2", {{"hang", true}}}};
  auto c = count.run({"check-nvidia-smi", "c", "app", "-c", "gpu_num", "--nvml-timeout", "0.3"});
  EXPECT_EQ(c.exit_code, 2) << c.out;
  EXPECT_NE(c.out.find("the device count: nvmlDeviceGetCount_v2 did not return within 300 ms"), std::string::npos)
      << c.out;
  EXPECT_EQ(c.out.find("GPU 0"), std::string::npos) << c.out;
}

TEST(HealthChecks, RunningProcessesOfTheJobsGpusAndTheForcedKill) {
  pid_t child = fork();
  if (child == 0) {
    execl("/bin/sleep", "sleep", "60", nullptr);
    _exit(127);
  }
  Host h(2);
  h.scenario["devices"][1]["processes"] = json::array({{{"pid", child}}, {{"pid", 999999}}});  // 999999: gone
  // A prolog for a job on GPU 0 only does not see GPU 1's process.
  auto mine = h.run({"check-nvidia-smi", "c", "prolog", "-c", "running_procs", "--verbose-out"},
                    {"SLURM_JOB_GPUS=0", "SLURM_JOB_ID=42"});
  EXPECT_EQ(mine.exit_code, 0) << mine.out;
  auto busy = h.run({"check-nvidia-smi", "c", "nagios", "-c", "running_procs", "--verbose-out"});
  EXPECT_EQ(busy.exit_code, 2);
  EXPECT_NE(busy.out.find(std::to_string(child)), std::string::npos) << busy.out;
  EXPECT_EQ(busy.out.find("999999"), std::string::npos) << "a pid that is gone is not running: " << busy.out;
  auto killed = h.run({"check-nvidia-smi", "c", "app", "-c", "running_procs_and_kill", "--running_procs_retry_count",
                       "2", "--running_procs_interval", "0.1", "--running_procs_force_kill", "true"});
  int status = 0;
  // The check killed the child (left a zombie until reaped here, which the check treats as gone).
  EXPECT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << killed.out;
  EXPECT_EQ(killed.exit_code, 0) << killed.out;
  EXPECT_NE(killed.out.find("pids are successfully killed: " + std::to_string(child)), std::string::npos) << killed.out;
}

TEST(HealthChecks, RunningProcessesSkipTheSuitesOwnToolsInTheCheckSession) {
  // As the suite runs it: the check leads a session of its own, and a tool of another check of its group (a
  // cudaMemTest) runs on a GPU in that session. Neither reported nor killed; a job's process still is.
  pid_t job = fork();
  if (job == 0) {
    setsid();
    execl("/bin/sleep", "sleep", "60", nullptr);
    _exit(127);
  }
  Host h(2);
  h.scenario["devices"][1]["processes"] = json::array({{{"pid", 424242}}, {{"pid", job}}});
  std::ofstream(h.dir + "/scenario.template") << h.scenario.dump();
  std::string hc = std::string(GCM_BINARY).substr(0, std::string(GCM_BINARY).rfind('/')) + "/health_checks";
  auto in_session = [&](const std::string& check) {
    CommandSpec s;
    // sh becomes the session leader, starts the "tool" in its session, puts the tool's pid in the scenario in place
    // of 424242, and execs the check (same pid: the check leads the session).
    s.argv = {"/usr/bin/setsid", "-w", "/bin/sh", "-c",
              "sleep 60 >/dev/null 2>&1 & echo $! > " + h.dir + "/tool.pid; sed \"s/424242/$!/\" " + h.dir +
                  "/scenario.template > " + h.dir + "/scenario.json; exec " + hc + " check-nvidia-smi c app -c " +
                  check + " --running_procs_retry_count 1 --running_procs_force_kill true --log-folder " + h.dir +
                  "/logs"};
    s.extra_env = {"GCM_FAKE_NVML_SCENARIO=" + h.dir + "/scenario.json",
                   std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML, "GCM_GPU_NODE_ID_FILE=" + h.dir + "/gpu_node_id"};
    s.timeout = std::chrono::seconds(60);
    return run_command(s);
  };
  auto seen = in_session("running_procs");
  EXPECT_EQ(seen.exit_code, 2) << seen.out << seen.err;
  EXPECT_NE(seen.out.find("has running processes: " + std::to_string(job)), std::string::npos) << seen.out;
  pid_t tool = 0;
  std::ifstream(h.dir + "/tool.pid") >> tool;
  ASSERT_GT(tool, 0);
  EXPECT_EQ(seen.out.find(std::to_string(tool)), std::string::npos) << "the session's own tool: " << seen.out;
  auto killed = in_session("running_procs_and_kill");
  std::ifstream(h.dir + "/tool.pid") >> tool;
  int status = 0;
  EXPECT_EQ(waitpid(job, &status, 0), job);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << killed.out;
  EXPECT_NE(killed.out.find("pids are successfully killed: " + std::to_string(job)), std::string::npos) << killed.out;
  EXPECT_EQ(killed.out.find(std::to_string(tool)), std::string::npos) << killed.out;
  ::kill(tool, SIGKILL);  // left running by the check, as it should be (setsid -w waited only for the check)
}

TEST(HealthChecks, KillswitchesConfigAndUsageErrors) {
  Host h(2);
  h.scenario["devices"][1]["remapped_rows"]["failure"] = 1;
  std::ofstream(h.dir + "/features.toml") << "[HealthChecksFeatures]\ndisable_nvidia_smi_row_remap = true\n";
  auto off = h.run({"--features-config", h.dir + "/features.toml", "check-nvidia-smi", "c", "app", "-c", "row_remap",
                    "--sink", "stdout"});
  EXPECT_EQ(off.exit_code, 0) << off.out << off.err;
  auto recs = records_of(off.out);
  ASSERT_EQ(recs.size(), 1u) << "a disabled check still sends its record";
  EXPECT_EQ(recs[0]["_msg"], "nvidia smi row_remap is disabled by killswitch.");
  std::ofstream(h.dir + "/all-off.toml") << "[HealthChecksFeatures]\ndisable_nvidia_smi = true\n";
  auto all_off = h.run({"--features-config", h.dir + "/all-off.toml", "check-nvidia-smi", "c", "app", "-c", "row_remap",
                        "--nvml-library", "/nonexistent.so"});
  EXPECT_EQ(all_off.exit_code, 0) << all_off.out << "(disabled before NVML is even loaded)";
  auto missing = h.run({"--features-config", h.dir + "/nope.toml", "check-nvidia-smi", "c", "app", "-c", "gpu_num"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("WARNING - check did not exit normally"), std::string::npos) << missing.out;
  EXPECT_NE(missing.err.find("features_config path doesn't exist"), std::string::npos) << missing.err;
  // A directory is a usage error naming it (as GCM's click.Path(dir_okay=False)), never "every check enabled".
  auto dir = h.run({"--features-config", h.dir, "check-nvidia-smi", "c", "app", "-c", "gpu_num"});
  EXPECT_EQ(dir.exit_code, 2) << dir.out << dir.err;
  EXPECT_NE(dir.err.find("features config " + h.dir + " is a directory"), std::string::npos) << dir.err;
  EXPECT_EQ(dir.out, "") << "no check ran";
  // Not TOML: GCM's fallback (every check enabled), but said on stderr and in the record, not only in a log file.
  std::ofstream(h.dir + "/broken.toml") << "[HealthChecksFeatures\ndisable_nvidia_smi_row_remap = true\n";
  auto broken = h.run({"--features-config", h.dir + "/broken.toml", "check-nvidia-smi", "c", "app", "-c", "row_remap",
                       "--sink", "stdout"});
  EXPECT_EQ(broken.exit_code, 2) << "row_remap ran and found the failed row" << broken.out << broken.err;
  EXPECT_NE(broken.err.find("Warning: features config " + h.dir + "/broken.toml:1:"), std::string::npos) << broken.err;
  auto broken_recs = records_of(broken.out);
  ASSERT_EQ(broken_recs.size(), 1u) << broken.out;
  EXPECT_NE(broken_recs[0]["_msg"].get<std::string>().find("\nWARNING: features config " + h.dir + "/broken.toml"),
            std::string::npos)
      << broken_recs[0]["_msg"];
  // --config that is a directory: exit 2 naming it (it read as an empty config).
  auto config_dir = h.run({"--config", h.dir, "check-nvidia-smi", "c", "app", "-c", "gpu_num"});
  EXPECT_EQ(config_dir.exit_code, 2) << config_dir.out << config_dir.err;
  EXPECT_NE(config_dir.err.find(h.dir + ": is a directory"), std::string::npos) << config_dir.err;

  // Config: cluster, type and options from [health_checks.check-nvidia-smi]; the command line wins.
  std::ofstream(h.dir + "/config.toml") << "[health_checks]\nlog_level = \"DEBUG\"\n"
                                        << "[health_checks.check-nvidia-smi]\ncluster = \"fromcfg\"\n"
                                        << "type = \"app\"\ncheck = [\"gpu_num\"]\ngpu_num = 3\n";
  auto cfg = h.run({"--config", h.dir + "/config.toml", "check-nvidia-smi", "--sink", "stdout"});
  EXPECT_EQ(cfg.exit_code, 2) << cfg.out << cfg.err;
  EXPECT_NE(cfg.out.find("expected, 3"), std::string::npos) << cfg.out;
  EXPECT_NE(cfg.out.find("\"cluster\": \"fromcfg\""), std::string::npos) << cfg.out;
  auto cli = h.run({"--config", h.dir + "/config.toml", "check-nvidia-smi", "c", "nagios", "--gpu_num", "2"});
  EXPECT_EQ(cli.exit_code, 0) << cli.out << cli.err;
  EXPECT_EQ(cli.out, "OK - nvidia smi\n");

  auto no_cluster = h.run({"check-nvidia-smi", "-c", "gpu_num"});
  EXPECT_EQ(no_cluster.exit_code, 2);
  EXPECT_NE(no_cluster.err.find("CLUSTER"), std::string::npos) << no_cluster.err;
  auto bad_type = h.run({"check-nvidia-smi", "c", "cron", "-c", "gpu_num"});
  EXPECT_EQ(bad_type.exit_code, 2);
  auto no_threshold = h.run({"check-nvidia-smi", "c", "app", "-c", "gpu_temperature"});
  EXPECT_EQ(no_threshold.exit_code, 2);
  EXPECT_NE(no_threshold.err.find("gpu_temperature_threshold is required"), std::string::npos) << no_threshold.err;
}

TEST(HealthChecks, OutputLineAndTelemetryPerType) {
  Host h(2);
  h.scenario["devices"][1]["remapped_rows"]["pending"] = 1;
  auto prolog =
      h.run({"check-nvidia-smi", "c", "prolog", "-c", "row_remap_pending", "--sink", "stdout"}, {"SLURM_JOB_ID=4242"});
  EXPECT_EQ(prolog.exit_code, 2);
  auto recs = records_of(prolog.out);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(prolog.out.find("CRITICAL - "), std::string::npos) << "prolog prints no line: " << prolog.out;
  EXPECT_EQ(recs[0]["job_id"], 4242);
  auto nojob = h.run({"check-nvidia-smi", "c", "epilog", "-c", "row_remap_pending", "--sink", "stdout"});
  auto r2 = records_of(nojob.out);
  ASSERT_EQ(r2.size(), 1u);
  EXPECT_NE(r2[0]["_msg"].get<std::string>().find("SLURM_JOB_ID is not set"), std::string::npos);
  auto nagios = h.run({"check-nvidia-smi", "c", "nagios", "-c", "row_remap_pending"});
  EXPECT_EQ(nagios.out, "CRITICAL - nvidia smi\n") << "nagios: no message unless --verbose-out";
  auto het =
      h.run({"check-telemetry", "c", "nagios", "--exit_code", "2", "--health-check-name", "check zombie", "--node",
             "h100-12-003", "--msg", "m", "--job-id", "21", "--sink", "stdout", "--heterogeneous-cluster-v1"});
  EXPECT_EQ(het.exit_code, 0);
  auto t = records_of(het.out);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0]["result"], 2);
  EXPECT_EQ(t[0]["node"], "h100-12-003");
  EXPECT_EQ(t[0]["job_id"], 21);
  EXPECT_EQ(t[0]["health_check"], "check zombie");
}

// The line, `-c gpu_num CLUSTER TYPE`, and the same words in other orders: each -c takes one value, so
// CLUSTER and TYPE are the positionals wherever the options stand, and every order runs the same sub-checks.
TEST(HealthChecks, OptionsMayStandAnywhereOnTheLine) {
  Host h(2);
  std::vector<std::vector<std::string>> orders = {
      {"check-nvidia-smi", "-c", "gpu_num", "fair_cluster", "app"},
      {"check-nvidia-smi", "fair_cluster", "-c", "gpu_num", "app"},
      {"check-nvidia-smi", "fair_cluster", "app", "-c", "gpu_num"},
  };
  for (auto words : orders) {
    words.insert(words.end(), {"--gpu_num", "2", "--sink", "stdout"});
    auto r = h.run(words);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    auto recs = records_of(r.out);
    ASSERT_EQ(recs.size(), 1u) << r.out << r.err;
    EXPECT_EQ(recs[0]["health_check"], "nvidia smi gpu_num");
    EXPECT_EQ(recs[0]["cluster"], "fair_cluster");
    EXPECT_EQ(recs[0]["type"], "app");
  }
  std::string first;
  for (std::vector<std::string> words : {
           std::vector<std::string>{"check-nvidia-smi", "-c", "gpu_num", "-c", "row_remap", "--gpu_num", "3", "c",
                                    "app"},
           {"check-nvidia-smi", "c", "--gpu_num", "3", "-c", "row_remap", "app", "-c", "gpu_num"},
           {"check-nvidia-smi", "c", "app", "-c", "row_remap", "-c", "gpu_num", "--gpu_num", "3"},
       }) {
    auto r = h.run(words);
    EXPECT_EQ(r.exit_code, 2) << "2 GPUs, 3 expected: " << r.out << r.err;
    if (first.empty()) first = r.out;
    EXPECT_EQ(r.out, first) << "the same verdict line in every order";
  }
  EXPECT_NE(first.find("CRITICAL - nvidia smi"), std::string::npos) << first;
  // --help says so, instead of CLI11's "TEXT ..." (which reads as several words after one -c).
  auto help = h.run({"check-nvidia-smi", "--help"});
  EXPECT_NE(help.out.find("persistence_mode} (repeatable)"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find(" ..."), std::string::npos) << help.out;
}

// GCM's -d/--detach: the check runs in the background; the command exits 0 at once and prints nothing, and the
// verdict reaches the telemetry sink (and the log) only.
TEST(HealthChecks, DetachRunsTheCheckInTheBackground) {
  Host h(2);
  std::string out = h.dir + "/telemetry.jsonl";
  auto r = h.run({"-d", "check-nvidia-smi", "c", "app", "-c", "gpu_num", "--gpu_num", "3", "--sink", "telemetry", "-o",
                  "file_path=" + out});
  EXPECT_EQ(r.exit_code, 0) << "the foreground process exits 0 whatever the verdict: " << r.err;
  EXPECT_EQ(r.out, "");
  ASSERT_TRUE(eventually([&] { return read_text(out).find("\n") != std::string::npos; }, std::chrono::seconds(20)))
      << "the detached check never sent its record";
  auto rec = nlohmann::json::parse(read_text(out).substr(0, read_text(out).find('\n')));
  EXPECT_EQ(rec["result"], 2);
  EXPECT_EQ(rec["health_check"], "nvidia smi gpu_num");
  // A bad sink option is still a usage error on the terminal: the sink is checked before detaching.
  auto bad = h.run({"--detach", "check-nvidia-smi", "c", "app", "-c", "gpu_num", "--sink", "telemetry"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("needs -o file_path=PATH"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace gcm::testing
