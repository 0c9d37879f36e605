// gcm rocm_monitor end to end on the fake libamd_smi.so (an 8 x MI300X node): GCM's records with vendor amd, job
// attribution of an AMD GPU's process, a value AMD lacks as null, a hung GPU, a host without amdsmi, and
// gcm --backend choosing the library of nvml_monitor.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "helpers.h"

namespace gcm::testing {
namespace {

using nlohmann::json;

json mi300x_node() {
  std::ifstream in(std::string(GCM_SOURCE_DIR) + "/tests/fake_amdsmi/scenarios/mi300x8.json");
  return json::parse(in);
}

struct AmdFixture {
  std::string dir = temp_dir("rocm");
  std::string scenario = dir + "/scenario.json";

  explicit AmdFixture(const json& j) { std::ofstream(scenario) << j.dump(1); }
  ~AmdFixture() { std::filesystem::remove_all(dir); }
  std::vector<std::string> env() const {
    // GCM_NVML_LIBRARY names a library that is not there: nothing here may reach NVML unless asked to.
    return {"GCM_FAKE_AMDSMI_SCENARIO=" + scenario, std::string("GCM_AMDSMI_LIBRARY=") + GCM_FAKE_AMDSMI,
            "GCM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"};
  }
  void add_process(uint32_t pid, std::initializer_list<std::string> environ) {
    std::string raw;
    for (const auto& e : environ) raw += e + '\0';
    std::filesystem::create_directories(dir + "/proc/" + std::to_string(pid));
    std::ofstream(dir + "/proc/" + std::to_string(pid) + "/environ", std::ios::binary) << raw;
  }
};

// The stdout sink leaves a null field out of a metric record.
bool absent(const json& record, const char* field) { return record.value(field, json()).is_null(); }

std::vector<json> json_lines(const std::string& out) {
  std::vector<json> v;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) v.push_back(json::parse(line));
  return v;
}

TEST(RocmMonitor, OnceOnAnMi300xNodeWritesGcmsRecordsWithVendorAmd) {
  json node = mi300x_node();
  node["devices"][3]["processes"] = json::array({{{"pid", 5151}, {"vram_mem", 8589934592}}});
  AmdFixture f(node);
  f.add_process(5151, {"SLURM_JOB_ID=777", "SLURM_CPUS_ON_NODE=96", "SLURM_JOB_GPUS=3", "ROCR_VISIBLE_DEVICES=3",
                       "SLURM_JOB_USER=bob", "SLURM_JOB_PARTITION=amd", "SLURM_NNODES=1"});
  std::ofstream(f.dir + "/proc/meminfo") << read_text("/proc/meminfo");
  auto r = run_gcm({"rocm_monitor", "--once", "--push-interval", "0.2", "--collect-interval", "0.1", "--path.procfs",
                    f.dir + "/proc", "--log-folder", f.dir},
                   std::chrono::seconds(60), f.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_lines(r.out);
  ASSERT_EQ(out.size(), 4u) << r.out;  // LOG per GPU, device metrics, host metrics, job join series
  ASSERT_EQ(out[0].size(), 8u);
  ASSERT_EQ(out[1].size(), 8u);
  const json& log3 = out[0][3];
  EXPECT_EQ(log3["gpu_id"], 3);
  EXPECT_EQ(log3["job_id"], 777);
  EXPECT_EQ(log3["job_user"], "bob");
  EXPECT_EQ(log3["job_cpus_per_gpu"], 96.0);
  EXPECT_TRUE(absent(log3, "retired_pages_count_single_bit")) << log3;  // AMD has bad pages instead
  const json& m0 = out[1][0];
  EXPECT_EQ(m0["vendor"], "amd");
  EXPECT_EQ(m0["up"], 1);
  EXPECT_EQ(m0["uuid"], "10ff74a1-0000-1000-80c0-5e6f7a8b0000");
  EXPECT_EQ(m0["pci_bus_id"], "0000:05:00.0");
  EXPECT_EQ(m0["name"], "AMD Instinct MI300X");
  EXPECT_EQ(m0["driver_version"], "6.10.5");
  EXPECT_EQ(m0["compute_partition"], "SPX");
  EXPECT_EQ(m0["memory_partition"], "NPS1");
  EXPECT_EQ(m0["power_limit_watts"], 750.0);
  EXPECT_EQ(m0["pcie_link_gen"], 5);
  EXPECT_EQ(m0["bad_pages"], 0);
  EXPECT_EQ(m0["xgmi_error_status"], 0);
  EXPECT_GT(m0["amdsmi_calls"].get<int64_t>(), 0);
  EXPECT_TRUE(absent(m0, "nvml_calls"));
  EXPECT_TRUE(absent(m0, "fan_speed_percent"));
  EXPECT_TRUE(absent(m0, "clock_sm_hertz"));
  EXPECT_GE(m0["gpu_util"].get<int64_t>(), 0);
  EXPECT_EQ(out[1][3]["process_count"], 1);
  ASSERT_EQ(out[3].size(), 1u);
  EXPECT_EQ(out[3][0]["gpu"], 3);
  EXPECT_EQ(out[3][0]["job_id"], 777);
  EXPECT_TRUE(std::filesystem::exists(f.dir + "/rocm_monitor_logs")) << "GCM's log folder of rocm_monitor";
}

TEST(RocmMonitor, AHungGpuIsReportedDownNotStale) {
  json node = mi300x_node();
  node["devices"][5]["delays"] = {{"amdsmi_get_gpu_activity", {{"hang", true}}}};
  AmdFixture f(node);
  auto r = run_gcm({"rocm_monitor", "--once", "--push-interval", "0.1", "--collect-interval", "0.1", "--amdsmi-timeout",
                    "0.3", "--log-folder", f.dir},
                   std::chrono::seconds(60), f.env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_lines(r.out);
  ASSERT_GE(out.size(), 2u) << r.out;
  const json& m5 = out[1][5];
  EXPECT_EQ(m5["up"], 0);
  EXPECT_EQ(m5["state"], "not_responding");
  EXPECT_NE(m5["state_detail"].get<std::string>().find("amdsmi_get_gpu_activity"), std::string::npos) << m5;
  EXPECT_TRUE(absent(m5, "temperature")) << m5;
  EXPECT_EQ(out[1][4]["up"], 1);
}

TEST(RocmMonitor, AHostWithoutAmdsmiExits69NamingTheLibrary) {
  AmdFixture f(mi300x_node());
  auto env = f.env();
  env[1] = "GCM_AMDSMI_LIBRARY=/nonexistent/libamd_smi.so";
  auto r = run_gcm({"rocm_monitor", "--once", "--log-folder", f.dir}, std::chrono::seconds(60), env);
  EXPECT_EQ(r.exit_code, 69) << r.err;
  EXPECT_NE(r.err.find("amdsmi is unavailable"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/libamd_smi.so"), std::string::npos) << r.err;
}

TEST(RocmMonitor, GcmBackendChoosesTheLibraryOfNvmlMonitorToo) {
  AmdFixture f(mi300x_node());
  // nvml_monitor on an AMD node: NVML is missing, --backend amdsmi and auto find the MI300Xs.
  for (const char* backend : {"amdsmi", "auto"}) {
    auto r = run_gcm({"--backend", backend, "nvml_monitor", "--once", "--push-interval", "0.1", "--collect-interval",
                      "0.1", "--log-folder", f.dir},
                     std::chrono::seconds(60), f.env());
    ASSERT_EQ(r.exit_code, 0) << backend << ": " << r.err;
    auto out = json_lines(r.out);
    ASSERT_GE(out.size(), 2u) << r.out;
    EXPECT_EQ(out[1].size(), 8u);
    EXPECT_EQ(out[1][0]["vendor"], "amd") << backend;
  }
  auto nvml = run_gcm({"--backend", "nvml", "rocm_monitor", "--once", "--log-folder", f.dir}, std::chrono::seconds(60),
                      f.env());
  EXPECT_EQ(nvml.exit_code, 69) << nvml.err;
  EXPECT_NE(nvml.err.find("NVML is unavailable"), std::string::npos) << nvml.err;
  auto bad = run_gcm({"--backend", "cuda", "rocm_monitor", "--once"}, std::chrono::seconds(60), f.env());
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
}

}  // namespace
}  // namespace gcm::testing
