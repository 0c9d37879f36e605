// Checks against the real libamd_smi.so on a host with an AMD GPU, run only when $GCM_REAL_AMDSMI names the library
// (tests/device/run-on-amd-gpu.sh sets it; CI and NVIDIA machines skip these). They check that the project's own
// amdsmi declarations (gpu/amdsmi_api.h) match the library's ABI (values land in the right fields and are
// plausible), that the event notification API registers every GPU, record what the library answers for every GPU
// into $GCM_AMDSMI_DUMP (JSON), and time a sample.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "agent/amdsmi_events.h"
#include "gpu/amdsmi_backend.h"
#include "gpu/gpu_sampler.h"
#include "real_library.h"

namespace gcm {
namespace {

using nlohmann::json;

const char* real_amdsmi() { return device_test::library_from_env("GCM_REAL_AMDSMI"); }

using device_test::opt;

json amd_to_json(const DeviceResult& r) {
  const GpuSample& s = r.sample;
  json procs = json::array();
  if (s.processes)
    for (const auto& p : *s.processes) procs.push_back({{"pid", p.pid}, {"vram_bytes", opt(p.used_memory_bytes)}});
  return {{"index", r.index},
          {"state", to_string(r.state)},
          {"detail", r.detail},
          {"name", opt(s.name)},
          {"uuid", opt(s.uuid)},
          {"pci_bus_id", opt(s.pci_bus_id)},
          {"compute_partition", opt(s.compute_partition)},
          {"memory_partition", opt(s.memory_partition)},
          {"gpu_util", opt(s.gpu_util)},
          {"mem_util", opt(s.mem_util)},
          {"memory_total_bytes", opt(s.memory_total_bytes)},
          {"memory_used_bytes", opt(s.memory_used_bytes)},
          {"temperature", opt(s.temperature)},
          {"power_draw_mw", opt(s.power_draw_mw)},
          {"power_limit_mw", opt(s.power_limit_mw)},
          {"energy_mj", opt(s.energy_mj)},
          {"clock_graphics_mhz", opt(s.clock_graphics_mhz)},
          {"max_clock_graphics_mhz", opt(s.max_clock_graphics_mhz)},
          {"clock_mem_mhz", opt(s.clock_mem_mhz)},
          {"max_clock_mem_mhz", opt(s.max_clock_mem_mhz)},
          {"clock_event_reasons", opt(s.clock_event_reasons)},
          {"pcie_link_gen", opt(s.pcie_link_gen)},
          {"pcie_link_width", opt(s.pcie_link_width)},
          {"pcie_link_gen_max", opt(s.pcie_link_gen_max)},
          {"pcie_link_width_max", opt(s.pcie_link_width_max)},
          {"pcie_replay_count", opt(s.pcie_replay_count)},
          {"ecc_corrected", opt(s.ecc_volatile_corrected)},
          {"ecc_uncorrected", opt(s.ecc_volatile_uncorrected)},
          {"ecc_deferred", opt(s.ecc_deferred)},
          {"bad_pages", opt(s.bad_pages)},
          {"bad_pages_pending", opt(s.bad_pages_pending)},
          {"xgmi_error_status", opt(s.xgmi_error_status)},
          {"processes", procs},
          {"errors", s.errors},
          {"calls", s.nvml_calls}};
}


TEST(RealAmdsmi, DeclarationsMatchTheLibraryValuesArePlausibleAndEveryGpuRegistersForEvents) {
  if (!real_amdsmi()) GTEST_SKIP() << "GCM_REAL_AMDSMI is not set (no AMD GPU to test against)";
  auto lib = AmdsmiLibrary::open(real_amdsmi(), std::chrono::seconds(30));
  GpuSampler sampler(std::make_shared<AmdsmiBackend>(lib), {});
  ASSERT_GE(sampler.device_count(), 1u);
  json dump = {{"driver_version", sampler.driver_version()},
               {"missing_symbols", lib->missing_symbols()},
               {"devices", json::array()}};
  auto results = sampler.sample();
  const std::regex bdf("^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]$");
  for (const auto& r : results) {
    dump["devices"].push_back(amd_to_json(r));
    EXPECT_EQ(r.state, GpuState::Ok) << r.detail;
    if (r.state != GpuState::Ok) continue;
    const GpuSample& s = r.sample;
    ASSERT_TRUE(s.uuid && s.pci_bus_id) << "GPU " << r.index;
    EXPECT_FALSE(s.uuid->empty());
    EXPECT_TRUE(std::regex_match(*s.pci_bus_id, bdf)) << *s.pci_bus_id;  // the BDF bit fields
    ASSERT_TRUE(s.memory_total_bytes && s.memory_used_bytes) << "GPU " << r.index;
    EXPECT_GT(*s.memory_total_bytes, 1ull << 30);
    EXPECT_LE(*s.memory_used_bytes, *s.memory_total_bytes);
    if (s.gpu_util) {
      EXPECT_LE(*s.gpu_util, 100);
    }
    if (s.temperature) {
      EXPECT_GT(*s.temperature, 0);
      EXPECT_LT(*s.temperature, 120);
    }
    if (s.power_limit_mw) {  // hundreds of watts on an Instinct GPU
      EXPECT_GT(*s.power_limit_mw, 50'000);
    }
    if (s.max_clock_graphics_mhz) {
      EXPECT_GT(*s.max_clock_graphics_mhz, 500);
    }
    if (s.pcie_link_width_max) {
      EXPECT_TRUE(*s.pcie_link_width_max == 8 || *s.pcie_link_width_max == 16);
    }
    if (s.xgmi_error_status) {
      EXPECT_LE(*s.xgmi_error_status, 2);
    }
    EXPECT_TRUE(s.processes.has_value());
  }
  device_test::SampleCost cost = device_test::time_samples(sampler, 50);
  dump["cpu_ms_per_sample"] = cost.cpu_ms;
  dump["wall_ms_per_sample"] = cost.wall_ms;
  std::printf("real amdsmi: %u GPU(s), %.3f ms CPU and %.3f ms wall per sample of all fields\n", sampler.device_count(),
              cost.cpu_ms, cost.wall_ms);

  // The event API: every GPU registers; a healthy GPU sends nothing in 2 s, and whatever it sends is recorded.
  std::mutex mu;
  json events = json::array();
  agent::AmdsmiEventWatcherOptions eo;
  eo.call_timeout = std::chrono::seconds(10);
  agent::AmdsmiEventWatcher watcher(
      lib,
      [&](const agent::AmdsmiEvent& e) {
        std::lock_guard lock(mu);
        events.push_back({{"gpu", e.gpu}, {"type", e.type}, {"message", e.message}});
      },
      eo);
  watcher.start();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  auto st = watcher.stats();
  watcher.stop();
  dump["events"] = {{"registered", st.gpus_registered}, {"problems", st.problems}, {"received", events}};
  EXPECT_EQ(st.gpus_registered, sampler.device_count()) << json(st.problems).dump();
  EXPECT_EQ(st.wait_errors, 0u) << json(st.problems).dump();
  if (const char* out = std::getenv("GCM_AMDSMI_DUMP")) std::ofstream(out) << dump.dump(2) << "\n";
}

}  // namespace
}  // namespace gcm
