// The NVML loader, the per-GPU workers and the sampler against the project's fake libnvidia-ml.so.1: every error
// path of the loader, NOT_SUPPORTED as null, a hung call, a GPU lost mid-run, and the fake's own NVML behaviour.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <thread>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gpu/gpu_sampler.h"
#include "gpu/nvml_library.h"

namespace gcm {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// Writes a scenario file and points the fake at it for the lifetime of the object.
class ScenarioFile {
 public:
  explicit ScenarioFile(const json& j) {
    char tmpl[] = "/tmp/gcm-nvml-scenario-XXXXXX";
    int fd = mkstemp(tmpl);
    ::close(fd);
    path_ = tmpl;
    std::ofstream(path_) << j.dump();
    ::setenv("GCM_FAKE_NVML_SCENARIO", path_.c_str(), 1);
  }
  ~ScenarioFile() {
    std::filesystem::remove(path_);
    ::unsetenv("GCM_FAKE_NVML_SCENARIO");
  }

 private:
  std::string path_;
};

json gpu(int i) {
  return {{"name", "NVIDIA H100"},
          {"uuid", "GPU-" + std::to_string(i)},
          {"serial", "S" + std::to_string(i)},
          {"pci_bus_id", "00000000:1" + std::to_string(i) + ":00.0"},
          {"vbios_version", "96.00"},
          {"utilization", {{"gpu", json::array({10, 80, 30})}, {"memory", 50}}},
          {"memory", {{"total", 1000}, {"used", 250}}},
          {"temperature", 40 + i},
          {"power_usage", 90000},
          {"power_limit", 100000},
          {"retired_pages", {{"single", 2}, {"double", 3}, {"pending", 0}}},
          {"processes", json::array({{{"pid", 100 + i}, {"used_memory", 4096}}, {{"pid", 200 + i}}})}};
}

// The fake's path: the build tree's, unless $GCM_FAKE_NVML says otherwise (the device check runs from elsewhere).
std::string fake_path() {
  const char* env = std::getenv("GCM_FAKE_NVML");
  return env && *env ? env : GCM_FAKE_NVML;
}

std::shared_ptr<NvmlLibrary> open_fake(milliseconds timeout = milliseconds(2000)) {
  return NvmlLibrary::open(fake_path(), timeout);
}

TEST(NvmlLibrary, MissingLibraryIsOneClearError) {
  try {
    NvmlLibrary::open("/nonexistent/libnvidia-ml.so.1", milliseconds(1000));
    FAIL() << "expected NvmlUnavailable";
  } catch (const NvmlUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GCM_NVML_LIBRARY"), std::string::npos) << e.what();
  }
}

TEST(NvmlLibrary, ALibraryWithoutNvmlSymbolsIsRejected) {
  try {
    NvmlLibrary::open("libz.so.1", milliseconds(1000));
    FAIL() << "expected NvmlUnavailable";
  } catch (const NvmlUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("nvmlInit_v2"), std::string::npos) << e.what();
  }
}

TEST(NvmlLibrary, NoDriverIsReportedWithNvmlsOwnMessage) {
  ::unsetenv("GCM_FAKE_NVML_SCENARIO");
  try {
    open_fake();
    FAIL() << "expected NvmlUnavailable";
  } catch (const NvmlUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("Driver Not Loaded"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("DRIVER_NOT_LOADED"), std::string::npos) << e.what();
  }
}

TEST(NvmlLibrary, AHungInitTimesOut) {
  ScenarioFile s(
      {{"errors", json::object()}, {"delays", {{"nvmlInit_v2", {{"hang", true}}}}}, {"devices", json::array()}});
  try {
    open_fake(milliseconds(200));
    FAIL() << "expected NvmlUnavailable";
  } catch (const NvmlUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("did not return within 200 ms"), std::string::npos) << e.what();
  }
}

TEST(NvmlLibrary, OpenSharedGivesLiveInstanceToEveryThreadAndOpensAgainOnceReleased) {
  ScenarioFile s(json{{"devices", json::array({gpu(0)})}});
  std::shared_ptr<NvmlLibrary> a, b;
  std::thread t1([&] { a = NvmlLibrary::open_shared(fake_path(), milliseconds(2000)); });
  std::thread t2([&] { b = NvmlLibrary::open_shared(fake_path(), milliseconds(2000)); });
  t1.join();
  t2.join();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a.get(), b.get()) << "two checks of one process share one nvmlInit";
  std::weak_ptr<NvmlLibrary> first = a;
  a.reset();
  b.reset();
  EXPECT_TRUE(first.expired()) << "the cache must not keep the library initialised";
  auto c = NvmlLibrary::open_shared(fake_path(), milliseconds(2000));
  unsigned n = 0;
  EXPECT_EQ(c->api().DeviceGetCount(&n), 0);
  EXPECT_EQ(n, 1u);
}

TEST(NvmlLibrary, PathComesFromOptionThenEnvironment) {
  ::setenv("GCM_NVML_LIBRARY", "/from/env.so", 1);
  EXPECT_EQ(nvml_library_path(std::string("/explicit.so")), "/explicit.so");
  EXPECT_EQ(nvml_library_path(std::nullopt), "/from/env.so");
  ::unsetenv("GCM_NVML_LIBRARY");
  EXPECT_EQ(nvml_library_path(std::nullopt), "libnvidia-ml.so.1");
}

TEST(FakeNvml, BehavesLikeTheRealLibraryWhereItMatters) {
  ScenarioFile s({{"driver_version", "550.1"}, {"devices", json::array({gpu(0)})}});
  auto lib = open_fake();
  const nvml::Api& a = lib->api();
  EXPECT_TRUE(lib->missing_symbols().empty()) << lib->missing_symbols().front();
  nvml::Device d = nullptr;
  ASSERT_EQ(a.DeviceGetHandleByIndex(0, &d), nvml::SUCCESS);
  EXPECT_EQ(a.DeviceGetHandleByIndex(1, &d), nvml::ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(a.DeviceGetHandleByIndex(0, &d), nvml::SUCCESS);
  char small[4];
  EXPECT_EQ(a.DeviceGetName(d, small, sizeof small), nvml::ERROR_INSUFFICIENT_SIZE);
  unsigned count = 0;
  EXPECT_EQ(a.DeviceGetComputeRunningProcesses(d, &count, nullptr), nvml::ERROR_INSUFFICIENT_SIZE);
  EXPECT_EQ(count, 2u);
  unsigned fan = 0;
  EXPECT_EQ(a.DeviceGetFanSpeed(d, &fan), nvml::ERROR_NOT_SUPPORTED);  // not in the scenario
  EXPECT_STREQ(a.ErrorString(nvml::ERROR_GPU_IS_LOST), "GPU is lost");
  // Init and shutdown nest; calls after the last shutdown fail as uninitialised.
  ASSERT_EQ(a.Init(), nvml::SUCCESS);
  ASSERT_EQ(a.Shutdown(), nvml::SUCCESS);
  unsigned n = 0;
  EXPECT_EQ(a.DeviceGetCount(&n), nvml::SUCCESS);
  EXPECT_EQ(n, 1u);
  ASSERT_EQ(a.Shutdown(), nvml::SUCCESS);
  EXPECT_EQ(a.DeviceGetCount(&n), nvml::ERROR_UNINITIALIZED);
  EXPECT_EQ(a.Shutdown(), nvml::ERROR_UNINITIALIZED);
  ASSERT_EQ(a.Init(), nvml::SUCCESS);  // so that the library's destructor has a matching shutdown
}

TEST(FakeNvml, AScenarioValueOfTheWrongTypeIsNamedNotAnAbort) {
  json g = gpu(0);
  g["temperature"] = "hot";
  g["serial"] = 5;
  g["processes"] = json::array({{{"pid", "one"}}});
  g["delays"] = {{"nvmlDeviceGetPowerUsage", {{"ms", "ten"}}}};  // faults are per device
  ScenarioFile s(json{{"devices", json::array({g})}});
  auto lib = open_fake();
  const nvml::Api& a = lib->api();
  nvml::Device d = nullptr;
  ASSERT_EQ(a.DeviceGetHandleByIndex(0, &d), nvml::SUCCESS);
  ::testing::internal::CaptureStderr();
  unsigned t = 0;
  EXPECT_EQ(a.DeviceGetTemperature(d, nvml::kTemperatureGpu, &t), nvml::ERROR_UNKNOWN);
  char buf[64];
  EXPECT_EQ(a.DeviceGetSerial(d, buf, sizeof buf), nvml::ERROR_UNKNOWN);
  unsigned count = 4;
  nvml::ProcessInfo infos[4];
  EXPECT_EQ(a.DeviceGetComputeRunningProcesses(d, &count, infos), nvml::ERROR_UNKNOWN);
  unsigned mw = 0;
  EXPECT_EQ(a.DeviceGetPowerUsage(d, &mw), nvml::ERROR_UNKNOWN);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("scenario value devices[0].temperature is string, expected a number"), std::string::npos) << err;
  EXPECT_NE(err.find("scenario value devices[0].serial is number, expected a string"), std::string::npos) << err;
  EXPECT_NE(err.find("devices[0].processes[0].pid is string, expected an unsigned integer"), std::string::npos) << err;
  EXPECT_NE(err.find("fault of nvmlDeviceGetPowerUsage on devices[0]"), std::string::npos) << err;
}

TEST(FakeNvml, ADeeplyNestedScenarioIsRefusedNamingTheLimit) {
  char tmpl[] = "/tmp/gcm-nvml-deep-XXXXXX";
  int fd = mkstemp(tmpl);
  ::close(fd);
  std::ofstream(tmpl) << "{\"devices\": [{\"name\": " << std::string(100000, '[') << std::string(100000, ']') << "}]}";
  ::setenv("GCM_FAKE_NVML_SCENARIO", tmpl, 1);
  ::testing::internal::CaptureStderr();
  EXPECT_THROW(open_fake(), NvmlUnavailable);
  std::string err = ::testing::internal::GetCapturedStderr();
  std::filesystem::remove(tmpl);
  ::unsetenv("GCM_FAKE_NVML_SCENARIO");
  EXPECT_NE(err.find("JSON nested deeper than 128 levels"), std::string::npos) << err;
}

TEST(FakeNvml, DeliversXidEventsThroughTheEventApi) {
  json g = gpu(0);
  g["xid_events"] = json::array({{{"xid", 79}, {"at_ms", 0}}});
  ScenarioFile s(json{{"devices", json::array({g})}});
  auto lib = open_fake();
  const nvml::Api& a = lib->api();
  nvml::Device d = nullptr;
  ASSERT_EQ(a.DeviceGetHandleByIndex(0, &d), nvml::SUCCESS);
  nvml::EventSet set = nullptr;
  ASSERT_EQ(a.EventSetCreate(&set), nvml::SUCCESS);
  ASSERT_EQ(a.DeviceRegisterEvents(d, nvml::kEventTypeXidCriticalError, set), nvml::SUCCESS);
  nvml::EventData ev{};
  ASSERT_EQ(a.EventSetWait(set, &ev, 1000), nvml::SUCCESS);
  EXPECT_EQ(ev.event_data, 79u);
  EXPECT_EQ(ev.device, d);
  EXPECT_EQ(a.EventSetWait(set, &ev, 10), nvml::ERROR_TIMEOUT);  // each event is delivered once
  EXPECT_EQ(a.EventSetFree(set), nvml::SUCCESS);
}

TEST(GpuSampler, SamplesEveryFieldAndSeriesAdvance) {
  json g1 = gpu(1);
  g1["errors"] = {{"nvmlDeviceGetTemperature", "NOT_SUPPORTED"}, {"nvmlDeviceGetPowerUsage", "UNKNOWN"}};
  json g0 = gpu(0);
  g0["mig"] = {{"mode", 1},
               {"max_devices", 7},
               {"devices", json::array({{{"index", 0}, {"uuid", "MIG-a"}, {"memory", {{"total", 10}, {"used", 4}}}},
                                        {{"index", 3}, {"uuid", "MIG-b"}, {"memory", {{"total", 20}, {"used", 5}}}}})}};
  g0["nvlinks"] = json::array({{{"state", 1}, {"crc_flit", 7}}, {{"state", 0}, {"crc_flit", 1}}});
  g0["recovery_action"] = 2;
  g0["clock_event_reasons"] = 0x44;
  ScenarioFile s({{"driver_version", "550.1"}, {"devices", json::array({g0, g1})}});
  GpuSampler sampler(open_fake(), {});
  ASSERT_EQ(sampler.device_count(), 2u);
  EXPECT_EQ(sampler.driver_version(), "550.1");

  auto r = sampler.sample();
  ASSERT_EQ(r.size(), 2u);
  ASSERT_EQ(r[0].state, GpuState::Ok) << r[0].detail;
  const GpuSample& a = r[0].sample;
  EXPECT_EQ(a.uuid, "GPU-0");
  EXPECT_EQ(a.pci_bus_id, "00000000:10:00.0");
  EXPECT_EQ(a.gpu_util, 10);
  EXPECT_EQ(a.mem_used_percent, 25);
  EXPECT_EQ(a.power_used_percent, 90);
  EXPECT_EQ(a.retired_pages_single, 2);
  EXPECT_EQ(a.retired_pages_double, 3);
  ASSERT_TRUE(a.processes);
  ASSERT_EQ(a.processes->size(), 2u);
  EXPECT_EQ((*a.processes)[1].pid, 200u);
  EXPECT_EQ((*a.processes)[0].used_memory_bytes, 4096u);
  EXPECT_FALSE((*a.processes)[1].used_memory_bytes);  // "not available"
  EXPECT_EQ(a.mig_mode_current, 1);
  ASSERT_EQ(a.mig_devices.size(), 2u);
  EXPECT_EQ(a.mig_devices[1].index, 3u);
  EXPECT_EQ(a.mig_devices[1].uuid, "MIG-b");
  ASSERT_EQ(a.nvlinks.size(), 2u);  // the list ends at the first link the GPU does not have
  EXPECT_FALSE(a.nvlinks[1].active);
  EXPECT_EQ(a.nvlinks[0].crc_flit_errors, 7u);
  EXPECT_EQ(a.recovery_action, 2);
  EXPECT_EQ(clock_event_reason_names(*a.clock_event_reasons),
            (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_FALSE(a.fan_speed_percent);  // not in the scenario: NOT_SUPPORTED -> null
  EXPECT_TRUE(a.errors.empty());

  ASSERT_EQ(r[1].state, GpuState::Ok);
  EXPECT_FALSE(r[1].sample.temperature);    // NOT_SUPPORTED: null, not an error
  EXPECT_FALSE(r[1].sample.power_draw_mw);  // UNKNOWN: null and reported
  EXPECT_FALSE(r[1].sample.power_used_percent);
  ASSERT_EQ(r[1].sample.errors.size(), 1u);
  EXPECT_NE(r[1].sample.errors[0].find("nvmlDeviceGetPowerUsage"), std::string::npos);

  EXPECT_EQ(sampler.sample()[0].sample.gpu_util, 80);  // the series advances per read
  auto third = sampler.sample();
  EXPECT_EQ(third[0].sample.gpu_util, 30);
  EXPECT_EQ(third[0].sample.uuid, "GPU-0");            // static fields are read once and kept
  EXPECT_EQ(sampler.sample()[0].sample.gpu_util, 30);  // then stays at the last value
}

TEST(GpuSampler, AHungCallStallsOnlyItsGpuAndTheGpuIsLostAfterThreeRounds) {
  json stuck = gpu(1);
  stuck["delays"] = {{"nvmlDeviceGetTemperature", {{"hang", true}}}};
  ScenarioFile s(json{{"devices", json::array({gpu(0), stuck, gpu(2)})}});
  GpuSamplerOptions o;
  o.call_timeout = milliseconds(200);
  auto lib = open_fake();
  GpuSampler sampler(lib, o);
  for (int round = 1; round <= 3; ++round) {
    auto r = sampler.sample();
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].state, GpuState::Ok) << r[0].detail;
    EXPECT_EQ(r[2].state, GpuState::Ok) << r[2].detail;
    EXPECT_EQ(r[1].state, round < 3 ? GpuState::NotResponding : GpuState::Lost) << "round " << round;
    EXPECT_NE(r[1].detail.find("nvmlDeviceGetTemperature did not return within 200 ms"), std::string::npos)
        << r[1].detail;
    EXPECT_FALSE(r[1].sample.gpu_util);  // nothing from the stuck GPU, not even the values read before the hang
  }
  // The stuck worker keeps the library, and so NVML's init reference, alive for good (as it must: its call may
  // return one day). Drop that reference so the next test's init loads its own scenario.
  lib->api().Shutdown();
}

TEST(GpuSampler, AGpuLostMidRunIsReportedWithoutValues) {
  json g = gpu(0);
  g["errors"] = {{"nvmlDeviceGetPowerUsage", {{"error", "GPU_IS_LOST"}, {"after_calls", 1}}}};
  ScenarioFile s(json{{"devices", json::array({g})}});
  GpuSampler sampler(open_fake(), {});
  auto first = sampler.sample();
  ASSERT_EQ(first[0].state, GpuState::Ok);
  EXPECT_EQ(first[0].sample.gpu_util, 10);
  auto second = sampler.sample();
  EXPECT_EQ(second[0].state, GpuState::Lost);
  EXPECT_NE(second[0].detail.find("nvmlDeviceGetPowerUsage"), std::string::npos) << second[0].detail;
  EXPECT_FALSE(second[0].sample.gpu_util);
  EXPECT_FALSE(second[0].sample.temperature);
  EXPECT_EQ(second[0].sample.uuid, "GPU-0");  // its identity stays known; no measurement does
}

// Lost in its very first sample (a GPU that fell off the bus before the agent started answers its identity calls
// but nothing else): the identity read before the loss is kept, so its XIDs are attributed to it.
TEST(GpuSampler, AGpuLostInItsFirstSampleKeepsTheIdentityItGave) {
  json g = gpu(0);
  g["errors"] = {{"nvmlDeviceGetUtilizationRates", "GPU_IS_LOST"}};
  ScenarioFile s(json{{"devices", json::array({g})}});
  GpuSampler sampler(open_fake(), {});
  for (int round = 0; round < 2; ++round) {
    auto r = sampler.sample();
    ASSERT_EQ(r[0].state, GpuState::Lost);
    EXPECT_FALSE(r[0].sample.gpu_util);
    EXPECT_EQ(r[0].sample.uuid, "GPU-0") << "round " << round;
    EXPECT_TRUE(r[0].sample.pci_bus_id) << "round " << round;
  }
}

TEST(GpuSampler, ManySlowCallsHitTheSampleBudgetNotJustTheCallTimeout) {
  json slow = gpu(1);
  // Every call answers within the 200 ms call timeout, but eight of them take 150 ms: 1.2 s for one sample.
  // Only the first sample is slow (for_calls: the calls of one sample).
  slow["delays"] = {{"nvmlDeviceGetClockInfo", {{"ms", 150}, {"for_calls", 3}}},
                    {"nvmlDeviceGetMaxClockInfo", {{"ms", 150}, {"for_calls", 3}}},
                    {"nvmlDeviceGetApplicationsClock", {{"ms", 150}, {"for_calls", 2}}}};
  ScenarioFile s(json{{"devices", json::array({gpu(0), slow})}});
  GpuSamplerOptions o;
  o.call_timeout = milliseconds(200);
  o.sample_budget_in_call_timeouts = 3;
  auto lib = open_fake();
  GpuSampler sampler(lib, o);
  auto r = sampler.sample();
  EXPECT_EQ(r[0].state, GpuState::Ok) << r[0].detail;
  EXPECT_EQ(r[1].state, GpuState::NotResponding);
  EXPECT_NE(r[1].detail.find("the sample did not finish within 600 ms"), std::string::npos) << r[1].detail;
  EXPECT_FALSE(r[1].sample.gpu_util);
  // Once the slow sample has finished (its worker refuses new work until then), the GPU is Ok again. Bounded wait:
  // a condition, not a timing assertion.
  GpuState state = r[1].state;
  for (int i = 0; i < 200 && state != GpuState::Ok; ++i) {
    std::this_thread::sleep_for(milliseconds(50));
    state = sampler.sample()[1].state;
  }
  EXPECT_EQ(state, GpuState::Ok);
}

TEST(GpuSampler, AHungDeviceCountIsUnavailableNotAHang) {
  ScenarioFile s({{"delays", {{"nvmlDeviceGetCount", {{"hang", true}}}}}, {"devices", json::array({gpu(0)})}});
  GpuSamplerOptions o;
  o.call_timeout = milliseconds(200);
  auto lib = open_fake();
  EXPECT_THROW(GpuSampler(lib, o), NvmlUnavailable);
  lib->api().Shutdown();  // the stuck probe keeps its reference, as above
}

}  // namespace
}  // namespace gcm
