// The amdsmi loader, the AMD backend's mapping onto GpuSample and the records, and the fake libamd_smi.so itself:
// every error path of the loader, a value AMD lacks as null (never 0), a hung call named, ECC and bad-page growth,
// the event notification API.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gpu/amdsmi_backend.h"
#include "gpu/amdsmi_library.h"
#include "gpu/amdsmi_sample_device.h"
#include "gpu/gpu_records.h"
#include "gpu/gpu_sampler.h"

namespace gcm {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// Writes a scenario file and points the fake amdsmi at it for the lifetime of the object.
class AmdScenario {
 public:
  explicit AmdScenario(const json& j) {
    char tmpl[] = "/tmp/gcm-amdsmi-scenario-XXXXXX";
    int fd = mkstemp(tmpl);
    ::close(fd);
    path_ = tmpl;
    std::ofstream(path_) << j.dump();
    ::setenv("GCM_FAKE_AMDSMI_SCENARIO", path_.c_str(), 1);
  }
  ~AmdScenario() {
    std::filesystem::remove(path_);
    ::unsetenv("GCM_FAKE_AMDSMI_SCENARIO");
  }

 private:
  std::string path_;
};

json mi300x_node() {
  std::ifstream in(std::string(GCM_SOURCE_DIR) + "/tests/fake_amdsmi/scenarios/mi300x8.json");
  return json::parse(in);
}

std::shared_ptr<AmdsmiLibrary> open_fake_amdsmi(milliseconds timeout = milliseconds(2000)) {
  return AmdsmiLibrary::open(GCM_FAKE_AMDSMI, timeout);
}

GpuSampler amd_sampler(GpuSamplerOptions opts = {}) {
  return GpuSampler(std::make_shared<AmdsmiBackend>(open_fake_amdsmi()), opts);
}

TEST(AmdsmiLibrary, MissingLibraryIsOneClearError) {
  try {
    AmdsmiLibrary::open("/nonexistent/libamd_smi.so", milliseconds(1000));
    FAIL() << "expected AmdsmiUnavailable";
  } catch (const AmdsmiUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/libamd_smi.so"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("GCM_AMDSMI_LIBRARY"), std::string::npos) << e.what();
    EXPECT_EQ(e.missing, "amdsmi");
  }
}

TEST(AmdsmiLibrary, ALibraryWithoutAmdsmiSymbolsNamesWhatItLacks) {
  try {
    AmdsmiLibrary::open("libz.so.1", milliseconds(1000));
    FAIL() << "expected AmdsmiUnavailable";
  } catch (const AmdsmiUnavailable& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("libz.so.1"), std::string::npos) << what;
    EXPECT_NE(what.find("amdsmi_init"), std::string::npos) << what;
    EXPECT_NE(what.find("amdsmi_get_processor_handles"), std::string::npos) << what;
  }
}

TEST(AmdsmiLibrary, NoDriverIsTheStatusByName) {
  ::unsetenv("GCM_FAKE_AMDSMI_SCENARIO");  // the fake acts as a host without the amdgpu driver
  try {
    open_fake_amdsmi();
    FAIL() << "expected AmdsmiUnavailable";
  } catch (const AmdsmiUnavailable& e) {
    EXPECT_EQ(e.status, amdsmi::STATUS_DRIVER_NOT_LOADED);
    EXPECT_NE(std::string(e.what()).find("AMDSMI_STATUS_DRIVER_NOT_LOADED"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Driver not loaded"), std::string::npos) << e.what();
  }
}

TEST(AmdsmiLibrary, AHungInitTimesOut) {
  AmdScenario s(json{{"delays", {{"amdsmi_init", {{"hang", true}}}}}, {"devices", json::array()}});
  auto start = std::chrono::steady_clock::now();
  try {
    open_fake_amdsmi(milliseconds(200));
    FAIL() << "expected AmdsmiUnavailable";
  } catch (const AmdsmiUnavailable& e) {
    EXPECT_EQ(e.status, amdsmi::STATUS_TIMEOUT);
    EXPECT_NE(std::string(e.what()).find("amdsmi_init"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("200 ms"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(AmdsmiLibrary, PathFromOptionThenEnvironmentThenSearch) {
  ::unsetenv("GCM_AMDSMI_LIBRARY");
  EXPECT_EQ(amdsmi_library_path(std::nullopt), "libamd_smi.so");
  ::setenv("GCM_AMDSMI_LIBRARY", "/opt/rocm/lib/libamd_smi.so", 1);
  EXPECT_EQ(amdsmi_library_path(std::nullopt), "/opt/rocm/lib/libamd_smi.so");
  EXPECT_EQ(amdsmi_library_path(std::string("/x/libamd_smi.so")), "/x/libamd_smi.so");
  ::unsetenv("GCM_AMDSMI_LIBRARY");
}

TEST(AmdsmiLibrary, TheFakeExportsEveryDeclaredEntryPoint) {
  AmdScenario s(mi300x_node());
  auto lib = open_fake_amdsmi();
  EXPECT_TRUE(lib->missing_symbols().empty()) << lib->missing_symbols()[0];
  EXPECT_EQ(lib->error_string(amdsmi::STATUS_BUSY), "Device busy");
}

TEST(AmdsmiBackend, AnMi300xNodeMapsOntoTheSample) {
  AmdScenario s(mi300x_node());
  GpuSampler sampler = amd_sampler();
  ASSERT_EQ(sampler.device_count(), 8u);
  EXPECT_EQ(sampler.driver_version(), "6.10.5");
  EXPECT_STREQ(sampler.backend().vendor(), "amd");
  auto first = sampler.sample();
  ASSERT_EQ(first.size(), 8u);
  const GpuSample& g = first[0].sample;
  EXPECT_EQ(first[0].state, GpuState::Ok) << first[0].detail;
  EXPECT_STREQ(first[0].vendor, "amd");
  EXPECT_EQ(g.uuid, "10ff74a1-0000-1000-80c0-5e6f7a8b0000");
  EXPECT_EQ(g.pci_bus_id, "0000:05:00.0");
  EXPECT_EQ(first[7].sample.pci_bus_id, "0000:e5:00.0");
  EXPECT_EQ(g.name, "AMD Instinct MI300X");
  EXPECT_EQ(g.compute_partition, "SPX");
  EXPECT_EQ(g.memory_partition, "NPS1");
  EXPECT_EQ(g.gpu_util, 0);
  EXPECT_EQ(g.mem_util, 0);
  EXPECT_EQ(g.memory_total_bytes, 205822885888u);
  EXPECT_EQ(g.memory_used_bytes, 297795584u);
  EXPECT_EQ(g.mem_used_percent, 0);
  EXPECT_EQ(g.temperature, 41);  // the hotspot sensor
  EXPECT_EQ(g.power_draw_mw, 142000);
  EXPECT_EQ(g.power_limit_mw, 750000);
  EXPECT_EQ(g.power_used_percent, 18);
  EXPECT_EQ(g.energy_mj, static_cast<uint64_t>(100000000.0 * static_cast<double>(15.259f) / 1000.0));
  EXPECT_EQ(g.clock_graphics_mhz, 132);
  EXPECT_EQ(g.max_clock_graphics_mhz, 2100);
  EXPECT_EQ(g.clock_mem_mhz, 1300);
  EXPECT_EQ(g.clock_event_reasons, 0u);
  EXPECT_EQ(g.pcie_link_gen, 5);
  EXPECT_EQ(g.pcie_link_gen_max, 5);
  EXPECT_EQ(g.pcie_link_width, 16);
  EXPECT_EQ(g.pcie_link_width_max, 16);
  EXPECT_EQ(g.pcie_replay_count, 0);
  EXPECT_EQ(g.ecc_volatile_corrected, 0u);
  EXPECT_EQ(g.ecc_volatile_uncorrected, 0u);
  EXPECT_EQ(g.ecc_deferred, 0u);
  EXPECT_EQ(g.bad_pages, 0);
  EXPECT_EQ(g.bad_pages_pending, 0);
  EXPECT_EQ(g.xgmi_error_status, 0);
  ASSERT_TRUE(g.processes);
  EXPECT_TRUE(g.processes->empty());
  EXPECT_TRUE(g.errors.empty()) << g.errors[0];
  // What AMD has no call for stays null, never 0.
  EXPECT_FALSE(g.serial);
  EXPECT_FALSE(g.vbios_version);
  EXPECT_FALSE(g.minor_number);
  EXPECT_FALSE(g.clock_sm_mhz);
  EXPECT_FALSE(g.app_clock_graphics_mhz);
  EXPECT_FALSE(g.fan_speed_percent);
  EXPECT_FALSE(g.performance_state);
  EXPECT_FALSE(g.persistence_mode);
  EXPECT_FALSE(g.retired_pages_single);
  EXPECT_FALSE(g.retired_pages_double);
  EXPECT_FALSE(g.remapped_rows_correctable);
  EXPECT_FALSE(g.ecc_aggregate_corrected);
  EXPECT_FALSE(g.pcie_tx_kbps);
  EXPECT_FALSE(g.recovery_action);
  EXPECT_TRUE(g.nvlinks.empty());
  // Calls per GPU per sample: 19 on the first (5 of them the static identity), 14 after.
  EXPECT_EQ(g.nvml_calls, 19);

  auto second = sampler.sample();
  const GpuSample& h = second[0].sample;
  EXPECT_EQ(h.gpu_util, 95);
  EXPECT_EQ(h.mem_util, 41);
  EXPECT_EQ(h.temperature, 63);
  EXPECT_EQ(h.power_draw_mw, 690000);
  EXPECT_EQ(h.mem_used_percent, 88);
  EXPECT_EQ(h.clock_graphics_mhz, 2100);
  EXPECT_EQ(h.uuid, g.uuid);  // the identity is kept from the first sample
  EXPECT_EQ(h.compute_partition, "SPX");
  EXPECT_EQ(h.nvml_calls, 14);
}

TEST(AmdsmiBackend, AFieldTheGpuLacksIsNullNeverZero) {
  json d = {{"uuid", "u0"},
            {"bdf", "0001:c1:1f.7"},
            {"activity", {{"gfx", 30}}},  // umc missing: amdsmi's sentinel
            {"temperature", {{"edge", 50}}},
            {"power", {{"average_socket_power", 300}}},  // current missing, no limit
            {"clocks", {{"gfx", {{"clk", 1500}}}}},
            {"violation", {{"active_ppt_pwr", 1}, {"active_vr_thrm", 0}}},
            {"pcie", {{"width", 8}, {"speed", 16000}}}};
  AmdScenario s(json{{"devices", json::array({d})}});
  GpuSampler sampler = amd_sampler();
  auto r = sampler.sample();
  ASSERT_EQ(r.size(), 1u);
  const GpuSample& g = r[0].sample;
  EXPECT_EQ(g.pci_bus_id, "0001:c1:1f.7");
  EXPECT_EQ(g.gpu_util, 30);
  EXPECT_FALSE(g.mem_util);
  EXPECT_EQ(g.temperature, 50);  // no hotspot sensor: the edge
  EXPECT_EQ(g.power_draw_mw, 300000);
  EXPECT_FALSE(g.power_limit_mw);
  EXPECT_FALSE(g.power_used_percent);
  EXPECT_FALSE(g.memory_total_bytes);
  EXPECT_EQ(g.mem_used_percent, -1);  // the reference's "unknown"
  EXPECT_EQ(g.clock_graphics_mhz, 1500);
  EXPECT_FALSE(g.max_clock_graphics_mhz);
  EXPECT_FALSE(g.clock_mem_mhz);
  EXPECT_EQ(g.clock_event_reasons, 0x4u);  // PPT power -> sw_power_cap; the flags it lacks are not "off"
  EXPECT_EQ(g.pcie_link_gen, 4);
  EXPECT_EQ(g.pcie_link_width, 8);
  EXPECT_FALSE(g.pcie_link_gen_max);
  EXPECT_FALSE(g.pcie_link_width_max);
  EXPECT_FALSE(g.pcie_replay_count);
  EXPECT_FALSE(g.energy_mj);
  EXPECT_FALSE(g.ecc_volatile_corrected);
  EXPECT_FALSE(g.bad_pages);
  EXPECT_FALSE(g.xgmi_error_status);
  EXPECT_FALSE(g.name);
  EXPECT_FALSE(g.compute_partition);
  EXPECT_TRUE(g.errors.empty()) << g.errors[0];

  DeviceResult dr = r[0];
  Record rec = device_metrics_record(dr, "node1", "6.10.5", std::nullopt);
  EXPECT_EQ(rec.at("vendor").as_string(), "amd");
  EXPECT_TRUE(rec.at("power_limit_watts").is_null());
  EXPECT_TRUE(rec.at("fan_speed_percent").is_null());
  EXPECT_TRUE(rec.at("retired_pages_count_single_bit").is_null());
  EXPECT_TRUE(rec.at("bad_pages").is_null());
  EXPECT_TRUE(rec.at("nvml_calls").is_null());
  EXPECT_EQ(rec.at("amdsmi_calls").as_int(), g.nvml_calls);
  EXPECT_EQ(rec.at("clock_event_reason_names").as_string(), "sw_power_cap");
  EXPECT_DOUBLE_EQ(rec.at("power_watts").as_number(), 300.0);
}

TEST(AmdsmiBackend, ViolationFlagsMapOntoClockEventReasons) {
  amdsmi::ViolationStatus v;
  std::memset(&v, 0xff, sizeof(v));
  EXPECT_FALSE(amd_violation_reasons(v));  // nothing supported: no mask at all
  v.active_socket_thrm = 1;
  v.active_prochot_thrm = 0;
  EXPECT_EQ(amd_violation_reasons(v), 0x20u);
  v.active_prochot_thrm = 1;
  v.active_vr_thrm = 1;
  EXPECT_EQ(amd_violation_reasons(v), 0x20u | 0x8u | 0x40u);
  EXPECT_EQ(pcie_generation_of_speed(32000), 5);
  EXPECT_EQ(pcie_generation_of_speed(2500), 1);
  EXPECT_FALSE(pcie_generation_of_speed(12345));
}

TEST(AmdsmiBackend, EccAndBadPagesGrowBetweenSamples) {
  json d = mi300x_node()["devices"][0];
  d["ecc"] = {{"correctable", json::array({0, 5, 9})}, {"uncorrectable", 0}, {"deferred", json::array({0, 1})}};
  d["bad_pages"] = {{"retired", json::array({0, 2, 3})}, {"pending", json::array({0, 1, 0})}};
  d["xgmi_error_status"] = json::array({0, 0, 2});
  AmdScenario s(json{{"devices", json::array({d})}});
  GpuSampler sampler = amd_sampler();
  auto a = sampler.sample()[0].sample;
  EXPECT_EQ(a.ecc_volatile_corrected, 0u);
  EXPECT_EQ(a.bad_pages, 0);
  auto b = sampler.sample()[0].sample;
  EXPECT_EQ(b.ecc_volatile_corrected, 5u);
  EXPECT_EQ(b.ecc_deferred, 1u);
  EXPECT_EQ(b.bad_pages, 2);
  EXPECT_EQ(b.bad_pages_pending, 1);
  EXPECT_EQ(b.xgmi_error_status, 0);
  auto c = sampler.sample()[0].sample;
  EXPECT_EQ(c.ecc_volatile_corrected, 9u);
  EXPECT_EQ(c.bad_pages, 3);
  EXPECT_EQ(c.bad_pages_pending, 0);
  EXPECT_EQ(c.xgmi_error_status, 2);
}

TEST(AmdsmiBackend, ProcessesAreListedWithTheirVram) {
  json d = mi300x_node()["devices"][2];
  d["processes"] = json::array({{{"pid", 4242}, {"vram_mem", 1073741824}}, {{"pid", 4243}}});
  AmdScenario s(json{{"devices", json::array({d})}});
  GpuSampler sampler = amd_sampler();
  auto g = sampler.sample()[0].sample;
  ASSERT_TRUE(g.processes);
  ASSERT_EQ(g.processes->size(), 2u);
  EXPECT_EQ((*g.processes)[0].pid, 4242u);
  EXPECT_EQ((*g.processes)[0].used_memory_bytes, 1073741824u);
  EXPECT_EQ((*g.processes)[1].pid, 4243u);
}

TEST(AmdsmiBackend, AnErrorOtherThanNotSupportedIsRecordedAndTheValueIsNull) {
  json d = mi300x_node()["devices"][0];
  d["errors"] = {{"amdsmi_get_gpu_activity", "BUSY"}, {"amdsmi_get_pcie_info", "NOT_SUPPORTED"}};
  AmdScenario s(json{{"devices", json::array({d})}});
  GpuSampler sampler = amd_sampler();
  auto g = sampler.sample()[0].sample;
  EXPECT_FALSE(g.gpu_util);
  EXPECT_FALSE(g.pcie_link_gen);
  ASSERT_EQ(g.errors.size(), 1u);
  EXPECT_EQ(g.errors[0], "amdsmi_get_gpu_activity: Device busy");
  EXPECT_EQ(g.temperature, 41);  // the rest of the sample is there
}

TEST(AmdsmiBackend, AHungCallIsNamedAndOnlyItsGpuStopsAnswering) {
  json node = mi300x_node();
  node["devices"][1]["delays"] = {{"amdsmi_get_power_info", {{"hang", true}, {"after_calls", 1}}}};
  node["devices"] = json::array({node["devices"][0], node["devices"][1]});
  AmdScenario s(node);
  GpuSamplerOptions opts;
  opts.call_timeout = milliseconds(300);
  opts.lost_after_timeouts = 2;
  auto lib = open_fake_amdsmi();
  GpuSampler sampler(std::make_shared<AmdsmiBackend>(lib), opts);
  auto first = sampler.sample();
  EXPECT_EQ(first[1].state, GpuState::Ok);
  auto second = sampler.sample();
  EXPECT_EQ(second[0].state, GpuState::Ok);
  EXPECT_EQ(second[1].state, GpuState::NotResponding);
  EXPECT_NE(second[1].detail.find("amdsmi_get_power_info"), std::string::npos) << second[1].detail;
  EXPECT_EQ(second[1].sample.uuid, first[1].sample.uuid);  // the identity, no measurement
  EXPECT_FALSE(second[1].sample.temperature);
  auto third = sampler.sample();
  EXPECT_EQ(third[1].state, GpuState::Lost);
  EXPECT_EQ(third[0].state, GpuState::Ok);
  // The stuck worker keeps the library, and so amdsmi's init reference, alive for good (its call may return one
  // day). Drop that reference so the next test's init loads its own scenario.
  lib->api().ShutDown();
}

TEST(AmdsmiBackend, AHungEnumerationMakesTheLibraryUnavailable) {
  json node = mi300x_node();
  node["delays"] = {{"amdsmi_get_socket_handles", {{"hang", true}}}};
  AmdScenario s(node);
  GpuSamplerOptions opts;
  opts.call_timeout = milliseconds(200);
  auto lib = open_fake_amdsmi();
  try {
    GpuSampler sampler(std::make_shared<AmdsmiBackend>(lib), opts);
    FAIL() << "expected AmdsmiUnavailable";
  } catch (const AmdsmiUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("amdsmi_get_socket_handles did not return within 200 ms"), std::string::npos)
        << e.what();
  }
  lib->api().ShutDown();  // the stuck probe keeps its reference, as above
}

TEST(FakeAmdsmi, EventsComeAtTheirTimeAndOnlyForTheMask) {
  json node = mi300x_node();
  node["devices"][0]["events"] = json::array({{{"type", "GPU_PRE_RESET"}, {"at_ms", 0}, {"message", "reset 1"}},
                                              {{"type", "VM_FAULT"}, {"at_ms", 0}},
                                              {{"type", "RING_HANG"}, {"at_ms", 600000}}});
  AmdScenario s(node);
  auto lib = open_fake_amdsmi();
  std::vector<amdsmi::ProcessorHandle> gpus;
  std::string error;
  CallWatch w;
  ASSERT_TRUE(enumerate_amd_gpus(*lib, w, gpus, &error)) << error;
  ASSERT_EQ(gpus.size(), 8u);
  const amdsmi::Api& a = lib->api();
  ASSERT_EQ(a.InitGpuEventNotification(gpus[0]), amdsmi::STATUS_SUCCESS);
  uint64_t mask = amdsmi::event_mask_bit(amdsmi::kEvtGpuPreReset) | amdsmi::event_mask_bit(amdsmi::kEvtRingHang);
  ASSERT_EQ(a.SetGpuEventNotificationMask(gpus[0], mask), amdsmi::STATUS_SUCCESS);
  amdsmi::EventNotification ev[4] = {};
  uint32_t n = 4;
  ASSERT_EQ(a.GetGpuEventNotification(100, &n, ev), amdsmi::STATUS_SUCCESS);
  ASSERT_EQ(n, 1u);  // the VM fault is not in the mask, the ring hang not due yet
  EXPECT_EQ(ev[0].processor_handle, gpus[0]);
  EXPECT_EQ(ev[0].event, amdsmi::kEvtGpuPreReset);
  EXPECT_STREQ(ev[0].message, "reset 1");
  n = 4;
  EXPECT_EQ(a.GetGpuEventNotification(20, &n, ev), amdsmi::STATUS_NO_DATA);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(a.StopGpuEventNotification(gpus[0]), amdsmi::STATUS_SUCCESS);
}

TEST(FakeAmdsmi, AMalformedEventFailsInitNamingIt) {
  json node = mi300x_node();
  node["devices"][3]["events"] = json::array({{{"type", "NOT_A_TYPE"}}});
  AmdScenario s(node);
  try {
    open_fake_amdsmi();
    FAIL() << "expected AmdsmiUnavailable";
  } catch (const AmdsmiUnavailable& e) {
    EXPECT_EQ(e.status, amdsmi::STATUS_INIT_ERROR);
  }
}

}  // namespace
}  // namespace gcm
