// gcm nvml_monitor end to end with the fake libnvidia-ml.so.1: the reference's test expectation, job attribution
// through a procfs tree, Prometheus series, a hung GPU, a lost GPU, and a host without NVML.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "helpers.h"

namespace gcm::testing {
namespace {

using nlohmann::json;

struct Fixture {
  std::string dir = temp_dir("nvml");
  std::string scenario = dir + "/scenario.json";

  explicit Fixture(const json& j) { std::ofstream(scenario) << j.dump(1); }
  ~Fixture() { std::filesystem::remove_all(dir); }
  std::vector<std::string> env() const {
    return {"GCM_FAKE_NVML_SCENARIO=" + scenario, std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML};
  }
  void add_process(uint32_t pid, std::initializer_list<std::string> environ) {
    std::string raw;
    for (const auto& e : environ) raw += e + '\0';
    std::filesystem::create_directories(dir + "/proc/" + std::to_string(pid));
    std::ofstream(dir + "/proc/" + std::to_string(pid) + "/environ", std::ios::binary) << raw;
  }
};

// One JSON list per line (the stdout sink writes one line per chunk).
std::vector<json> lines_of(const std::string& out) {
  std::vector<json> v;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) v.push_back(json::parse(line));
  return v;
}

json reference_gpu(int i, int util) {
  // Two samples per window: the record carries each field's maximum.
  return {{"uuid", "GPU-" + std::to_string(i)},
          {"utilization", {{"gpu", json::array({util - 30, util})}, {"memory", json::array({90, 10})}}},
          {"memory", {{"total", 100}, {"used", 50}}},
          {"temperature", json::array({42, 41})},
          {"power_usage", 90},
          {"power_limit", 100},
          {"retired_pages", {{"single", 2}, {"double", 3}}},
          {"processes", json::array({{{"pid", 4242}}})}};
}

TEST(NvmlMonitor, ReproducesTheReferenceExpectation) {
  Fixture f(json{{"devices", json::array({reference_gpu(0, 80), reference_gpu(1, 81)})}});
  f.add_process(4242, {"SLURM_JOB_ID=1234", "SLURM_CPUS_ON_NODE=40", "SLURM_JOB_GPUS=0,1", "GPU_DEVICE_ORDINAL=0,1",
                       "SLURM_JOB_USER=alice", "SLURM_JOB_PARTITION=gpu", "SLURM_NNODES=1"});
  std::ofstream(f.dir + "/proc/meminfo") << read_text("/proc/meminfo");  // copy_file sees procfs files as empty
  auto r = run_gcm({"nvml_monitor", "--once", "--push-interval", "1.5", "--collect-interval", "1", "--path.procfs",
                    f.dir + "/proc", "--log-folder", f.dir},
                   std::chrono::seconds(60), f.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = lines_of(r.out);
  ASSERT_EQ(out.size(), 4u) << r.out;  // LOG per GPU, device metrics, host metrics, job join series
  const json& d0 = out[0][0];
  EXPECT_EQ(d0["gpu_util"], 80);
  EXPECT_EQ(d0["mem_util"], 90);
  EXPECT_EQ(d0["temperature"], 42);
  EXPECT_EQ(d0["power_draw"], 90);
  EXPECT_EQ(d0["power_used_percent"], 90);
  EXPECT_EQ(d0["retired_pages_count_single_bit"], 2);
  EXPECT_EQ(d0["retired_pages_count_double_bit"], 3);
  EXPECT_EQ(d0["job_id"], 1234);
  EXPECT_EQ(d0["job_cpus_per_gpu"], 20.0);
  EXPECT_EQ(d0["job_user"], "alice");
  EXPECT_EQ(d0["gpu_id"], 0);
  EXPECT_EQ(out[0][1]["gpu_util"], 81);
  const json& host = out[2][0];
  EXPECT_EQ(host["max_gpu_util"], 81);
  EXPECT_EQ(host["min_gpu_util"], 80);
  EXPECT_EQ(host["avg_gpu_util"], 80.5);
  EXPECT_GT(host["ram_util"].get<double>(), 0.0);
  EXPECT_EQ(out[1][0]["up"], 1);
  EXPECT_EQ(out[1][0]["uuid"], "GPU-0");
  ASSERT_EQ(out[3].size(), 2u);
  EXPECT_EQ(out[3][1]["job_id"], 1234);
  EXPECT_EQ(out[3][1]["gpu"], 1);
}

TEST(NvmlMonitor, IdleGpusCountInTheHostAverage) {
  json g0 = reference_gpu(0, 30), g1 = reference_gpu(1, 30);
  g0["utilization"]["gpu"] = 0;
  g1["utilization"]["gpu"] = 60;
  Fixture f(json{{"devices", json::array({g0, g1})}});
  auto r =
      run_gcm({"nvml_monitor", "--once", "--push-interval", "0.1", "--collect-interval", "0.1", "--log-folder", f.dir},
              std::chrono::seconds(60), f.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = lines_of(r.out);
  ASSERT_GE(out.size(), 3u);
  EXPECT_EQ(out[2][0]["min_gpu_util"], 0);  // the reference skips 0 % GPUs and would say 60 here
  EXPECT_EQ(out[2][0]["avg_gpu_util"], 30.0);
}

// GCM's nvml_monitor logs to <log_folder>/nvml_monitor_logs/<hostname>.log (it runs on every node, often with a
// shared log folder); the other collectors use <name>.log.
TEST(NvmlMonitor, LogsToTheHostsOwnFileAsGcmDoes) {
  Fixture f(json{{"devices", json::array({reference_gpu(0, 30)})}});
  auto r = run_gcm({"nvml_monitor", "--once", "--push-interval", "0.1", "--collect-interval", "0.1", "--log-folder",
                    f.dir, "--log-level", "DEBUG"},
                   std::chrono::seconds(60), f.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  std::string log = read_text(f.dir + "/nvml_monitor_logs/" + host + ".log");
  EXPECT_NE(log.find("] - [nvml_monitor] - "), std::string::npos) << "logger name kept: " << log;
  EXPECT_FALSE(std::filesystem::exists(f.dir + "/nvml_monitor_logs/nvml_monitor.log"));
  auto help = run_gcm({"nvml_monitor", "--help"});
  EXPECT_NE(help.out.find("<log-folder>/nvml_monitor_logs/<hostname>.log"), std::string::npos) << help.out;
}

TEST(NvmlMonitor, AHungGpuIsReportedDownAndTheOthersStillSampled) {
  json stuck = reference_gpu(1, 50);
  stuck["delays"] = {{"nvmlDeviceGetTemperature", {{"hang", true}}}};
  json lost = reference_gpu(2, 50);
  lost["errors"] = {{"nvmlDeviceGetUtilizationRates", "GPU_IS_LOST"}};
  Fixture f(json{{"devices", json::array({reference_gpu(0, 50), stuck, lost})}});
  std::string prom = f.dir + "/metrics.prom";
  auto r = run_gcm({"nvml_monitor", "--once", "--push-interval", "0.1", "--collect-interval", "0.1", "--nvml-timeout",
                    "0.3", "--sink", "prometheus", "-o", "textfile=" + prom, "--log-folder", f.dir},
                   std::chrono::seconds(60), f.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string text = read_text(prom);
  EXPECT_NE(text.find("gcm_gpu_up{gpu=\"0\",uuid=\"GPU-0\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("gcm_gpu_up{gpu=\"1\"} 0"), std::string::npos) << text;  // hung before its UUID was read
  // Lost after its UUID was read: it keeps its identity (the UUID does not depend on the GPU answering now).
  EXPECT_NE(text.find("gcm_gpu_up{gpu=\"2\",uuid=\"GPU-2\"} 0"), std::string::npos) << text;
  EXPECT_NE(text.find("gcm_gpu_temperature_celsius{gpu=\"0\",uuid=\"GPU-0\"} 42"), std::string::npos) << text;
  EXPECT_EQ(text.find("gcm_gpu_temperature_celsius{gpu=\"2\""), std::string::npos) << "no stale values: " << text;
}

TEST(NvmlMonitor, NoNvmlIsOneMessageAndExitCode69) {
  auto dir = temp_dir("nonvml");
  auto r = run_gcm({"nvml_monitor", "--once", "--nvml-library", "/nonexistent/libnvidia-ml.so.1", "--log-folder", dir});
  EXPECT_EQ(r.exit_code, 69) << r.err;
  EXPECT_NE(r.err.find("NVML is unavailable"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << r.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcm::testing
