// health_checks check-amd-smi against the fake libamd_smi.so (an 8 x MI300X node): every sub-check passes on a healthy
// node and fails on its own condition, a GPU whose amdsmi calls hang is CRITICAL by name without holding the check,
// the job's GPUs of a prolog, the forced kill, the killswitches, and a host without amdsmi.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "helpers.h"

namespace gcm::testing {
namespace {

using nlohmann::json;

struct AmdHost {
  std::string dir = temp_dir("hc-amd");
  json scenario = json::parse(read_text(std::string(GCM_SOURCE_DIR) + "/tests/fake_amdsmi/scenarios/mi300x8.json"));
  AmdHost() {
    // Idle: the first value of each series is the idle one, and a check samples once.
    for (auto& d : scenario["devices"]) d["memory"]["used"] = 297795584;  // what the driver holds on an idle MI300X
  }
  ~AmdHost() { std::filesystem::remove_all(dir); }
  CommandResult run(std::vector<std::string> args, std::vector<std::string> extra_env = {}) {
    std::ofstream(dir + "/scenario.json") << scenario.dump();
    std::vector<std::string> env = {"GCM_FAKE_AMDSMI_SCENARIO=" + dir + "/scenario.json",
                                    std::string("GCM_AMDSMI_LIBRARY=") + GCM_FAKE_AMDSMI,
                                    "GCM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1",
                                    "SLURM_JOB_ID=",
                                    "SLURM_JOB_GPUS=",
                                    "ROCR_VISIBLE_DEVICES=",
                                    "HIP_VISIBLE_DEVICES=",
                                    "CUDA_VISIBLE_DEVICES="};
    for (const auto& e : extra_env) {  // an explicit value replaces the default one
      std::string key = e.substr(0, e.find('=') + 1);
      env.erase(std::remove_if(env.begin(), env.end(), [&](const std::string& x) { return x.rfind(key, 0) == 0; }),
                env.end());
      env.push_back(e);
    }
    CommandSpec s;
    s.argv = {std::string(GCM_BINARY).substr(0, std::string(GCM_BINARY).rfind('/')) + "/health_checks"};
    s.argv.insert(s.argv.end(), args.begin(), args.end());
    s.argv.insert(s.argv.end(), {"--log-folder", dir + "/logs"});
    s.timeout = std::chrono::seconds(60);
    s.extra_env = env;
    return run_command(s);
  }
};

const std::vector<std::string> kEverySubCheck = {
    "-c", "gpu_num",       "-c", "clock_freq",      "-c", "running_procs", "-c", "gpu_temperature",
    "-c", "gpu_mem_usage", "-c", "ecc_uncorrected", "-c", "bad_pages",     "-c", "xgmi"};

std::vector<std::string> every_sub_check(std::vector<std::string> head) {
  head.insert(head.end(), kEverySubCheck.begin(), kEverySubCheck.end());
  head.insert(head.end(), {"--gpu_temperature_threshold", "85", "--gpu_mem_usage_threshold", "1024"});
  return head;
}

TEST(CheckAmdSmi, AHealthyMi300xNodePassesEverySubCheckWithOneRecordEach) {
  AmdHost h;
  auto r = h.run(every_sub_check({"check-amd-smi", "c", "nagios", "--sink", "stdout"}));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto recs = records_of(r.out);
  ASSERT_EQ(recs.size(), 8u) << r.out;  // one record per sub-check, in the table's order
  const char* names[] = {"amd smi gpu_num",   "amd smi clock_freq",      "amd smi running_procs", "amd smi gpu_temp",
                         "amd smi mem_usage", "amd smi ecc_uncorrected", "amd smi bad_pages",     "amd smi xgmi"};
  for (size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(recs[i]["health_check"], names[i]);
    EXPECT_EQ(recs[i]["result"], 0) << recs[i];
  }
  EXPECT_NE(r.out.find("OK - amd smi\n"), std::string::npos) << r.out;
  // GCM's default VRAM threshold (15 MiB) is below what an idle MI300X's driver holds: said by name and amount.
  auto idle = h.run({"check-amd-smi", "c", "app", "-c", "gpu_mem_usage"});
  EXPECT_EQ(idle.exit_code, 2) << idle.out;
  EXPECT_NE(idle.out.find("gpu_mem_usage check: GPU 0: 284 MiB of VRAM in use, above the threshold 15 MiB"),
            std::string::npos)
      << idle.out;
}

TEST(CheckAmdSmi, EachSubCheckFailsOnItsOwnCondition) {
  struct Case {
    std::string check;
    std::function<void(json&)> fault;
    std::string message;
  };
  std::vector<Case> cases = {
      {"gpu_num", [](json& s) { s["devices"].erase(7); },
       "gpu_num check: exit_code: ExitCode.CRITICAL, Number of GPUs present, 7, is different than expected, 8"},
      {"clock_freq", [](json& s) { s["devices"][2]["clocks"]["gfx"]["max_clk"] = 700; },
       "clock_freq check: GPU 2: maximum clocks graphics 700 MHz (minimum 800), memory 1300 MHz (minimum 800)"},
      {"gpu_temperature", [](json& s) { s["devices"][4]["temperature"]["hotspot"] = 97; },
       "gpu_temperature check: GPU 4: temperature 97 C is above the threshold 85 C"},
      {"ecc_uncorrected", [](json& s) { s["devices"][5]["ecc"]["uncorrectable"] = 3; },
       "ecc_uncorrected check: GPU 5: 3 uncorrected ECC errors, above the threshold 0"},
      {"bad_pages", [](json& s) { s["devices"][6]["bad_pages"]["pending"] = 1; },
       "bad_pages check: GPU 6: bad pages: 0 retired (threshold 10), 1 pending"},
      {"xgmi", [](json& s) { s["devices"][1]["xgmi_error_status"] = 2; },
       "xgmi check: GPU 1: several XGMI link errors"},
  };
  for (const auto& c : cases) {
    AmdHost h;
    c.fault(h.scenario);
    auto r = h.run({"check-amd-smi", "c", "app", "-c", c.check, "--gpu_temperature_threshold", "85"});
    EXPECT_EQ(r.exit_code, 2) << c.check << ": " << r.out << r.err;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.check << ": " << r.out;
  }
}

TEST(CheckAmdSmi, AHungGpuIsCriticalByNameAndTheOthersAreStillJudged) {
  AmdHost h;
  h.scenario["devices"][3]["delays"] = {{"amdsmi_get_temp_metric", {{"hang", true}}}};
  h.scenario["devices"][5]["ecc"]["uncorrectable"] = 1;
  auto t0 = std::chrono::steady_clock::now();
  auto r = h.run({"check-amd-smi", "c", "app", "-c", "gpu_temperature", "--gpu_temperature_threshold", "85", "-c",
                  "ecc_uncorrected", "--amdsmi-timeout", "0.5"});
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("gpu_temperature check: GPU 3 not_responding: amdsmi_get_temp_metric did not return within "
                       "500 ms"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ecc_uncorrected check: GPU 3 not_responding"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ecc_uncorrected check: GPU 5: 1 uncorrected ECC errors"), std::string::npos) << r.out;
  EXPECT_LT(took, 20) << "the hung call was left behind at its timeout";
}

TEST(CheckAmdSmi, RunningProcessesOfTheJobsGpusAndTheForcedKill) {
  pid_t child = fork();
  if (child == 0) {
    execl("/bin/sleep", "sleep", "60", nullptr);
    _exit(127);
  }
  AmdHost h;
  h.scenario["devices"][1]["processes"] =
      json::array({{{"pid", child}, {"vram_mem", 1 << 30}}, {{"pid", 999999}, {"vram_mem", 1 << 20}}});
  // A prolog for a job on GPU 0 only (ROCm's own variable) does not see GPU 1's process.
  auto mine =
      h.run({"check-amd-smi", "c", "prolog", "-c", "running_procs"}, {"ROCR_VISIBLE_DEVICES=0", "SLURM_JOB_ID=42"});
  EXPECT_EQ(mine.exit_code, 0) << mine.out;
  auto busy = h.run({"check-amd-smi", "c", "app", "-c", "running_procs"});
  EXPECT_EQ(busy.exit_code, 2);
  EXPECT_NE(busy.out.find("running_procs check: GPU 1 has running processes: " + std::to_string(child)),
            std::string::npos)
      << busy.out;
  EXPECT_EQ(busy.out.find("999999"), std::string::npos) << "a pid that is gone is not running: " << busy.out;
  auto killed = h.run({"check-amd-smi", "c", "app", "-c", "running_procs_and_kill", "--running_procs_retry_count", "2",
                       "--running_procs_interval", "0.1", "--running_procs_force_kill", "true"});
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << killed.out;
  EXPECT_EQ(killed.exit_code, 0) << killed.out;
  EXPECT_NE(killed.out.find("pids are successfully killed: " + std::to_string(child)), std::string::npos) << killed.out;
}

TEST(CheckAmdSmi, KillswitchesAndAHostWithoutAmdsmi) {
  AmdHost h;
  h.scenario["devices"][1]["xgmi_error_status"] = 1;
  std::ofstream(h.dir + "/features.toml") << "[HealthChecksFeatures]\ndisable_amd_smi_xgmi = true\n";
  auto off = h.run(
      {"--features-config", h.dir + "/features.toml", "check-amd-smi", "c", "app", "-c", "xgmi", "--sink", "stdout"});
  EXPECT_EQ(off.exit_code, 0) << off.out << off.err;
  auto recs = records_of(off.out);
  ASSERT_EQ(recs.size(), 1u) << "a disabled check still sends its record";
  EXPECT_EQ(recs[0]["_msg"], "amd smi xgmi is disabled by killswitch.");
  std::ofstream(h.dir + "/all-off.toml") << "[HealthChecksFeatures]\ndisable_amd_smi = true\n";
  auto all_off = h.run({"--features-config", h.dir + "/all-off.toml", "check-amd-smi", "c", "app", "-c", "xgmi",
                        "--amdsmi-library", "/nonexistent.so"});
  EXPECT_EQ(all_off.exit_code, 0) << all_off.out << "(disabled before amdsmi is even loaded)";
  auto absent =
      h.run({"check-amd-smi", "c", "app", "-c", "gpu_num"}, {"GCM_AMDSMI_LIBRARY=/nonexistent/libamd_smi.so"});
  EXPECT_EQ(absent.exit_code, 1) << absent.out << absent.err;
  EXPECT_NE(absent.out.find("amdsmi is unavailable: "), std::string::npos) << absent.out;
  EXPECT_NE(absent.out.find("/nonexistent/libamd_smi.so"), std::string::npos) << absent.out;
  auto usage = h.run({"check-amd-smi", "c", "nagios", "-c", "gpu_temperature"});
  EXPECT_EQ(usage.exit_code, 2) << usage.out << usage.err;
  EXPECT_NE((usage.out + usage.err).find("gpu_temperature_threshold is required for gpu_temperature check"),
            std::string::npos)
      << usage.out << usage.err;
}

}  // namespace
}  // namespace gcm::testing
