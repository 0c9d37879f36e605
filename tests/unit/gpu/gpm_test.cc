// GPM sampling against the fake NVML (two samples give metrics; unsupported GPUs and drivers without the GPM
// entry points give empty fields and no error), the fake's values over elapsed time (schedules, time scale, noise),
// and the count of NVML calls per sample with the field-value batch and without it.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "gpu/gpu_records.h"
#include "gpu/gpu_sampler.h"
#include "gpu/nvml_library.h"

namespace gcm {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// Writes a scenario file and points the fake at it (and sets or clears the clock's variables) for its lifetime.
class GpmScenario {
 public:
  explicit GpmScenario(const json& j, const char* epoch = nullptr, const char* time_scale = nullptr) {
    char tmpl[] = "/tmp/gcm-gpm-scenario-XXXXXX";
    ::close(mkstemp(tmpl));
    path_ = tmpl;
    std::ofstream(path_) << j.dump();
    ::setenv("GCM_FAKE_NVML_SCENARIO", path_.c_str(), 1);
    set("GCM_FAKE_NVML_EPOCH", epoch);
    set("GCM_FAKE_NVML_TIME_SCALE", time_scale);
  }
  ~GpmScenario() {
    std::filesystem::remove(path_);
    for (const char* v : {"GCM_FAKE_NVML_SCENARIO", "GCM_FAKE_NVML_EPOCH", "GCM_FAKE_NVML_TIME_SCALE"}) ::unsetenv(v);
  }

 private:
  static void set(const char* name, const char* v) {
    if (v)
      ::setenv(name, v, 1);
    else
      ::unsetenv(name);
  }
  std::string path_;
};

std::shared_ptr<NvmlLibrary> open_fake(const char* path = GCM_FAKE_NVML) {
  return NvmlLibrary::open(path, milliseconds(2000));
}

json h100(int i) {
  return {{"name", "NVIDIA H100 80GB HBM3"},
          {"uuid", "GPU-" + std::to_string(i)},
          {"utilization", {{"gpu", 50}, {"memory", 20}}},
          {"memory", {{"total", 1000}, {"used", 250}}},
          {"clocks", {{"graphics", 1980}, {"sm", 1980}, {"mem", 2619}}}};
}

json gpm_values() {
  return {{"supported", true},
          {"graphics_util", 90},
          {"sm_util", json::array({80, 40})},
          {"sm_occupancy", 35},
          {"any_tensor_util", 60},
          {"dram_bw_util", 25},
          {"pcie_tx_per_sec", 100},
          {"pcie_rx_per_sec", 200},
          {"nvlink_total_tx_per_sec", 3000},
          {"nvlink_total_rx_per_sec", 4000}};
}

std::string unix_now_minus(double seconds) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::to_string(static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9 - seconds);
}

bool has_gpm(const GpuSample& s) {
  return s.gpm_graphics_activity || s.gpm_sm_activity || s.gpm_sm_occupancy || s.gpm_tensor_activity ||
         s.gpm_dram_activity || s.gpm_pcie_tx_bytes_per_second || s.gpm_pcie_rx_bytes_per_second ||
         s.gpm_nvlink_tx_bytes_per_second || s.gpm_nvlink_rx_bytes_per_second;
}

TEST(Gpm, TwoSamplesGiveMetricsAsRatiosAndBytesPerSecond) {
  json g = h100(0);
  g["gpm"] = gpm_values();
  GpmScenario s(json{{"devices", json::array({g})}});
  GpuSampler sampler(open_fake(), {});
  auto first = sampler.sample();
  ASSERT_EQ(first[0].state, GpuState::Ok) << first[0].detail;
  EXPECT_FALSE(has_gpm(first[0].sample)) << "GPM needs two samples";
  auto second = sampler.sample()[0].sample;
  EXPECT_TRUE(second.errors.empty()) << second.errors[0];
  EXPECT_DOUBLE_EQ(*second.gpm_graphics_activity, 0.90);  // NVML's percent as a ratio
  EXPECT_DOUBLE_EQ(*second.gpm_sm_activity, 0.80);
  EXPECT_DOUBLE_EQ(*second.gpm_sm_occupancy, 0.35);
  EXPECT_DOUBLE_EQ(*second.gpm_tensor_activity, 0.60);
  EXPECT_DOUBLE_EQ(*second.gpm_dram_activity, 0.25);
  EXPECT_DOUBLE_EQ(*second.gpm_pcie_tx_bytes_per_second, 100.0 * 1048576);  // MiB/s as bytes/s
  EXPECT_DOUBLE_EQ(*second.gpm_pcie_rx_bytes_per_second, 200.0 * 1048576);
  EXPECT_DOUBLE_EQ(*second.gpm_nvlink_tx_bytes_per_second, 3000.0 * 1048576);
  EXPECT_DOUBLE_EQ(*second.gpm_nvlink_rx_bytes_per_second, 4000.0 * 1048576);
  EXPECT_DOUBLE_EQ(*sampler.sample()[0].sample.gpm_sm_activity, 0.40);  // each interval is a new read

  Record rec = device_metrics_record(DeviceResult{0, GpuState::Ok, "", second}, "host", "", std::nullopt);
  EXPECT_DOUBLE_EQ(rec.at("gpm_sm_activity").as_number(), 0.80);
  const FieldSpec* f = nullptr;
  for (const auto& spec : kIndexedDeviceMetrics->fields)
    if (spec.name == "gpm_sm_activity") f = &spec;
  ASSERT_TRUE(f);
  EXPECT_EQ(prometheus_metric_name(kIndexedDeviceMetrics, *f), "gcm_gpu_gpm_sm_activity_ratio");
}

TEST(Gpm, AnUnsupportedGpuLeavesTheFieldsEmptyAndIsAskedOnce) {
  json g = h100(0);
  g["gpm"] = {{"supported", false}, {"sm_util", 80}};
  GpmScenario s(json{{"devices", json::array({g, h100(1)})}});  // GPU 1 has no "gpm" at all
  GpuSampler sampler(open_fake(), {});
  sampler.sample();
  int64_t calls_without_query = 0;
  for (int i = 0; i < 2; ++i) {
    auto r = sampler.sample();
    for (const auto& d : r) {
      EXPECT_FALSE(has_gpm(d.sample));
      EXPECT_TRUE(d.sample.errors.empty()) << d.sample.errors[0];
    }
    if (i == 0) calls_without_query = r[0].sample.nvml_calls;
    EXPECT_EQ(r[0].sample.nvml_calls, calls_without_query) << "support is asked for once, not every sample";
  }
}

TEST(Gpm, ADriverWithoutTheGpmEntryPointsLeavesTheFieldsEmptyWithoutError) {
  json g = h100(0);
  g["gpm"] = gpm_values();
  GpmScenario s(json{{"devices", json::array({g})}});
  auto lib = open_fake(GCM_FAKE_NVML_NO_GPM);
  const auto& missing = lib->missing_symbols();
  EXPECT_NE(std::find(missing.begin(), missing.end(), "nvmlGpmSampleGet"), missing.end());
  GpuSampler sampler(lib, {});
  for (int i = 0; i < 3; ++i) {
    auto r = sampler.sample();
    ASSERT_EQ(r[0].state, GpuState::Ok) << r[0].detail;
    EXPECT_FALSE(has_gpm(r[0].sample));
    EXPECT_TRUE(r[0].sample.errors.empty()) << r[0].sample.errors[0];
  }
}

TEST(Gpm, AFailedMetricsCallIsReportedAndTheNextIntervalWorks) {
  json g = h100(0);
  g["gpm"] = gpm_values();
  g["errors"] = {{"nvmlGpmMetricsGet", {{"error", "UNKNOWN"}, {"for_calls", 1}}}};
  GpmScenario s(json{{"devices", json::array({g})}});
  GpuSampler sampler(open_fake(), {});
  sampler.sample();
  auto failed = sampler.sample()[0].sample;
  EXPECT_FALSE(has_gpm(failed));
  ASSERT_EQ(failed.errors.size(), 1u);
  EXPECT_NE(failed.errors[0].find("nvmlGpmMetricsGet"), std::string::npos) << failed.errors[0];
  EXPECT_TRUE(sampler.sample()[0].sample.gpm_sm_activity);
}

json scheduled_sm_clock() {
  json g = h100(0);
  g["clocks"]["sm"] = {
      {"schedule", json::array({{{"from_s", 0}, {"value", 1980}}, {{"from_s", 60}, {"value", 1410}}})}};
  return g;
}

unsigned sm_clock(const NvmlLibrary& lib) {
  nvml::Device d = nullptr;
  unsigned mhz = 0;
  EXPECT_EQ(lib.api().DeviceGetHandleByIndex(0, &d), nvml::SUCCESS);
  EXPECT_EQ(lib.api().DeviceGetClockInfo(d, nvml::CLOCK_SM, &mhz), nvml::SUCCESS);
  return mhz;
}

TEST(FakeNvml, AScheduleGivesTheStageOfElapsedScenarioTime) {
  {  // The epoch from the environment: 30 s ago, then 90 s ago.
    std::string epoch = unix_now_minus(30);
    GpmScenario s(json{{"devices", json::array({scheduled_sm_clock()})}}, epoch.c_str());
    EXPECT_EQ(sm_clock(*open_fake()), 1980u);
  }
  {
    std::string epoch = unix_now_minus(90);
    GpmScenario s(json{{"devices", json::array({scheduled_sm_clock()})}}, epoch.c_str());
    EXPECT_EQ(sm_clock(*open_fake()), 1410u);
  }
  {  // 0.9 s of real time at a time scale of 0.01 is 90 s of scenario time.
    std::string epoch = unix_now_minus(0.9);
    GpmScenario s(json{{"devices", json::array({scheduled_sm_clock()})}}, epoch.c_str(), "0.01");
    EXPECT_EQ(sm_clock(*open_fake()), 1410u);
  }
}

TEST(FakeNvml, TheScenariosTimeScaleCompressesASixtySecondScheduleIntoMilliseconds) {
  GpmScenario s(json{{"time_scale", 0.001}, {"devices", json::array({scheduled_sm_clock()})}});
  GpuSampler sampler(open_fake(), {});
  sampler.sample();
  std::this_thread::sleep_for(milliseconds(100));  // 100 s of scenario time: past the 60 s stage
  EXPECT_EQ(sampler.sample()[0].sample.clock_sm_mhz, 1410);
}

std::vector<unsigned> sm_clocks(int n) {
  auto lib = open_fake();
  std::vector<unsigned> v;
  for (int i = 0; i < n; ++i) v.push_back(sm_clock(*lib));
  return v;
}

TEST(FakeNvml, JitterIsBoundedAndTheSameForTheSameSeed) {
  json g = h100(0);
  g["clocks"]["sm"] = {{"value", 1000}, {"jitter", 0.05}};
  GpmScenario s(json{{"seed", 7}, {"devices", json::array({g})}});
  auto a = sm_clocks(50);
  for (unsigned v : a) {
    EXPECT_GE(v, 950u);
    EXPECT_LE(v, 1050u);
  }
  EXPECT_NE(*std::min_element(a.begin(), a.end()), *std::max_element(a.begin(), a.end())) << "no noise at all";
  EXPECT_EQ(sm_clocks(50), a) << "a reloaded scenario with the same seed repeats its noise";
}

TEST(FakeNvml, ABadScheduleIsRefusedWhenTheScenarioLoads) {
  for (const json& bad :
       {json{{"schedule", json::array({{{"from_s", 60}, {"value", 1}}, {{"from_s", 0}, {"value", 2}}})}},
        json{{"schedule", json::array({{{"value", 1}}})}}, json{{"value", 1}, {"jitter", 2}},
        json{{"schedule", json::array({{{"from_s", 0}, {"value", {{"nested", 1}}}}})}}}) {
    json g = h100(0);
    g["clocks"]["sm"] = bad;
    GpmScenario s(json{{"devices", json::array({g})}});
    EXPECT_THROW(open_fake(), NvmlUnavailable) << bad.dump();
  }
  GpmScenario s(json{{"time_scale", 0}, {"devices", json::array({h100(0)})}});
  EXPECT_THROW(open_fake(), NvmlUnavailable);
}

// The per-sample figure the agent reports, on the 8 x H100 scenario; the batch must not change a value.
TEST(GpuSampler, CountsNvmlCallsPerSampleAndTheFieldBatchSavesCallsWithoutChangingValues) {
  std::ifstream in(GCM_SOURCE_DIR "/tests/fake_nvml/scenarios/h100x8.json");
  json scenario = json::parse(in);
  auto second_sample = [](const json& sc) {
    GpmScenario s(sc);
    GpuSampler sampler(open_fake(), {});
    sampler.sample();
    return sampler.sample()[0];
  };
  DeviceResult batched = second_sample(scenario);
  for (auto& d : scenario["devices"]) d["errors"] = {{"nvmlDeviceGetFieldValues", "NOT_SUPPORTED"}};
  DeviceResult unbatched = second_sample(scenario);
  ASSERT_EQ(batched.state, GpuState::Ok) << batched.detail;
  std::printf("h100x8: %lld NVML calls per GPU per sample with the field batch, %lld without\n",
              static_cast<long long>(batched.sample.nvml_calls), static_cast<long long>(unbatched.sample.nvml_calls));
  EXPECT_LT(batched.sample.nvml_calls, unbatched.sample.nvml_calls);
  Record a = device_metrics_record(batched, "h", "", std::nullopt);
  Record b = device_metrics_record(unbatched, "h", "", std::nullopt);
  for (size_t i = 0; i < a.values.size(); ++i) {
    const std::string& name = kIndexedDeviceMetrics->fields[i].name;
    // The recovery action is a field only: without nvmlDeviceGetFieldValues it is null on both paths.
    if (name != "nvml_calls" && name != "recovery_action" && name != "recovery_action_name") {
      EXPECT_EQ(a.values[i], b.values[i]) << name;
    }
  }
  EXPECT_EQ(batched.sample.nvlinks.size(), 18u);
}

}  // namespace
}  // namespace gcm
