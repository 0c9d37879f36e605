// Checks against the real libnvidia-ml.so.1 on a host with an NVIDIA GPU, run only when $GCM_REAL_NVML names the
// library (the device check script sets it; CI has no GPU and skips these). They check that the project's own NVML
// declarations match the driver's ABI (values land in the right fields and are plausible), record what the driver
// returns for every call into $GCM_NVML_DUMP (JSON), and time a sample.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "attribution/gpu_jobs.h"
#include "gpu/gpu_sampler.h"
#include "real_library.h"
#include "gpu/nvml_library.h"

namespace gcm {
namespace {

using nlohmann::json;

const char* real_library() { return device_test::library_from_env("GCM_REAL_NVML"); }

using device_test::opt;

json to_json(const DeviceResult& r) {
  const GpuSample& s = r.sample;
  json links = json::array();
  for (const auto& l : s.nvlinks)
    links.push_back({{"link", l.link},
                     {"active", l.active},
                     {"replay", opt(l.replay_errors)},
                     {"recovery", opt(l.recovery_errors)},
                     {"crc_flit", opt(l.crc_flit_errors)},
                     {"crc_data", opt(l.crc_data_errors)}});
  json procs = json::array();
  if (s.processes)
    for (const auto& p : *s.processes)
      procs.push_back({{"pid", p.pid}, {"used_memory_bytes", opt(p.used_memory_bytes)}});
  json migs = json::array();
  for (const auto& m : s.mig_devices)
    migs.push_back({{"index", m.index}, {"uuid", opt(m.uuid)}, {"memory_total", opt(m.memory_total_bytes)}});
  return {{"index", r.index},
          {"state", to_string(r.state)},
          {"detail", r.detail},
          {"name", opt(s.name)},
          {"uuid", opt(s.uuid)},
          {"serial", opt(s.serial)},
          {"pci_bus_id", opt(s.pci_bus_id)},
          {"vbios_version", opt(s.vbios_version)},
          {"gpu_util", opt(s.gpu_util)},
          {"mem_util", opt(s.mem_util)},
          {"mem_used_percent", s.mem_used_percent},
          {"temperature", opt(s.temperature)},
          {"power_draw_mw", opt(s.power_draw_mw)},
          {"power_limit_mw", opt(s.power_limit_mw)},
          {"retired_pages_single", opt(s.retired_pages_single)},
          {"retired_pages_double", opt(s.retired_pages_double)},
          {"memory_total_bytes", opt(s.memory_total_bytes)},
          {"memory_used_bytes", opt(s.memory_used_bytes)},
          {"energy_mj", opt(s.energy_mj)},
          {"clock_graphics_mhz", opt(s.clock_graphics_mhz)},
          {"clock_sm_mhz", opt(s.clock_sm_mhz)},
          {"clock_mem_mhz", opt(s.clock_mem_mhz)},
          {"app_clock_graphics_mhz", opt(s.app_clock_graphics_mhz)},
          {"app_clock_mem_mhz", opt(s.app_clock_mem_mhz)},
          {"max_clock_graphics_mhz", opt(s.max_clock_graphics_mhz)},
          {"max_clock_sm_mhz", opt(s.max_clock_sm_mhz)},
          {"max_clock_mem_mhz", opt(s.max_clock_mem_mhz)},
          {"clock_event_reasons", opt(s.clock_event_reasons)},
          {"pcie_link_gen", opt(s.pcie_link_gen)},
          {"pcie_link_width", opt(s.pcie_link_width)},
          {"pcie_link_gen_max", opt(s.pcie_link_gen_max)},
          {"pcie_link_width_max", opt(s.pcie_link_width_max)},
          {"pcie_replay_count", opt(s.pcie_replay_count)},
          {"pcie_tx_kbps", opt(s.pcie_tx_kbps)},
          {"pcie_rx_kbps", opt(s.pcie_rx_kbps)},
          {"nvlinks", links},
          {"ecc_mode_current", opt(s.ecc_mode_current)},
          {"ecc_volatile_corrected", opt(s.ecc_volatile_corrected)},
          {"ecc_volatile_uncorrected", opt(s.ecc_volatile_uncorrected)},
          {"ecc_aggregate_corrected", opt(s.ecc_aggregate_corrected)},
          {"ecc_aggregate_uncorrected", opt(s.ecc_aggregate_uncorrected)},
          {"retired_pages_pending", opt(s.retired_pages_pending)},
          {"remapped_rows_correctable", opt(s.remapped_rows_correctable)},
          {"remapped_rows_uncorrectable", opt(s.remapped_rows_uncorrectable)},
          {"remapped_rows_pending", opt(s.remapped_rows_pending)},
          {"remapped_rows_failure", opt(s.remapped_rows_failure)},
          {"fan_speed_percent", opt(s.fan_speed_percent)},
          {"performance_state", opt(s.performance_state)},
          {"persistence_mode", opt(s.persistence_mode)},
          {"recovery_action", opt(s.recovery_action)},
          {"processes", procs},
          {"mig_mode_current", opt(s.mig_mode_current)},
          {"mig_devices", migs},
          {"errors", s.errors},
          {"nvml_calls", s.nvml_calls},
          {"gpm_graphics_activity", opt(s.gpm_graphics_activity)},
          {"gpm_sm_activity", opt(s.gpm_sm_activity)},
          {"gpm_sm_occupancy", opt(s.gpm_sm_occupancy)},
          {"gpm_tensor_activity", opt(s.gpm_tensor_activity)},
          {"gpm_dram_activity", opt(s.gpm_dram_activity)},
          {"gpm_pcie_tx_bytes_per_second", opt(s.gpm_pcie_tx_bytes_per_second)},
          {"gpm_pcie_rx_bytes_per_second", opt(s.gpm_pcie_rx_bytes_per_second)},
          {"gpm_nvlink_tx_bytes_per_second", opt(s.gpm_nvlink_tx_bytes_per_second)},
          {"gpm_nvlink_rx_bytes_per_second", opt(s.gpm_nvlink_rx_bytes_per_second)}};
}


TEST(RealNvml, DeclarationsMatchTheDriverAndValuesArePlausible) {
  if (!real_library()) GTEST_SKIP() << "GCM_REAL_NVML is not set (no NVIDIA driver to test against)";
  auto lib = NvmlLibrary::open(real_library(), std::chrono::seconds(30));
  GpuSampler sampler(lib, {});
  ASSERT_GE(sampler.device_count(), 1u);
  json dump = {{"driver_version", sampler.driver_version()},
               {"missing_symbols", lib->missing_symbols()},
               {"devices", json::array()}};
  auto results = sampler.sample();
  const std::regex bus_id("^[0-9A-F]{8}:[0-9A-F]{2}:[0-9A-F]{2}\\.[0-9A-F]$");
  for (const auto& r : results) {
    dump["devices"].push_back(to_json(r));
    ASSERT_EQ(r.state, GpuState::Ok) << r.detail;
    const GpuSample& s = r.sample;
    ASSERT_TRUE(s.uuid && s.name && s.pci_bus_id);
    EXPECT_EQ(s.uuid->rfind("GPU-", 0), 0u) << *s.uuid;
    EXPECT_NE(s.name->find("NVIDIA"), std::string::npos) << *s.name;
    EXPECT_TRUE(std::regex_match(*s.pci_bus_id, bus_id)) << *s.pci_bus_id;  // PciInfo layout
    ASSERT_TRUE(s.memory_total_bytes && s.memory_used_bytes);
    EXPECT_GT(*s.memory_total_bytes, 1ull << 30);
    EXPECT_LE(*s.memory_used_bytes, *s.memory_total_bytes);
    ASSERT_TRUE(s.gpu_util && s.temperature && s.power_draw_mw && s.power_limit_mw);
    EXPECT_LE(*s.gpu_util, 100);
    EXPECT_GT(*s.temperature, 0);
    EXPECT_LT(*s.temperature, 120);
    EXPECT_GT(*s.power_limit_mw, 50'000);  // a data-centre GPU's limit is hundreds of watts
    EXPECT_TRUE(s.processes.has_value());
    if (s.pcie_link_width_max) {
      EXPECT_TRUE(*s.pcie_link_width_max == 8 || *s.pcie_link_width_max == 16);
    }
    if (s.max_clock_sm_mhz) {
      EXPECT_GT(*s.max_clock_sm_mhz, 500);
    }
    if (s.ecc_mode_current) {
      EXPECT_LE(*s.ecc_mode_current, 1);
    }
    if (s.performance_state) {
      EXPECT_TRUE(*s.performance_state <= 15 || *s.performance_state == 32);
    }
  }
  // CPU time per sample of every GPU with all fields (the benchmark figure on real hardware).
  device_test::SampleCost cost = device_test::time_samples(sampler, 50);
  dump["cpu_ms_per_sample"] = cost.cpu_ms;
  dump["wall_ms_per_sample"] = cost.wall_ms;
  std::printf("real NVML: %u GPU(s), %.3f ms CPU and %.3f ms wall per sample of all fields\n", sampler.device_count(),
              cost.cpu_ms, cost.wall_ms);

  // The event API: register for XIDs and wait briefly; a healthy GPU has none (TIMEOUT), and the return codes are
  // recorded either way.
  const nvml::Api& a = lib->api();
  nvml::EventSet set = nullptr;
  nvml::Device d = nullptr;
  json events;
  events["create"] = nvml::return_code_name(a.EventSetCreate(&set));
  a.DeviceGetHandleByIndex(0, &d);
  events["register_xid"] = nvml::return_code_name(a.DeviceRegisterEvents(d, nvml::kEventTypeXidCriticalError, set));
  nvml::EventData ev{};
  events["wait_100ms"] = nvml::return_code_name(a.EventSetWait(set, &ev, 100));
  if (set) a.EventSetFree(set);
  dump["events"] = events;

  // GPM straight from the driver (not through the sampler): support, two samples 200 ms apart (GPM wants more than
  // 100 ms between them), every metric the project asks for with its return code, value, name and unit. Checks the
  // declared layouts: a wrong nvmlGpmMetricsGet_t would garble the names or the values.
  json gpm;
  nvml::GpmSupport support{};
  support.version = nvml::kGpmSupportVersion;
  gpm["query_support"] = nvml::return_code_name(a.GpmQueryDeviceSupport(d, &support));
  gpm["is_supported_device"] = support.is_supported_device;
  if (support.is_supported_device) {
    nvml::GpmSample s1 = nullptr, s2 = nullptr;
    gpm["alloc"] = nvml::return_code_name(a.GpmSampleAlloc(&s1));
    a.GpmSampleAlloc(&s2);
    gpm["sample1"] = nvml::return_code_name(a.GpmSampleGet(d, s1));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    gpm["sample2"] = nvml::return_code_name(a.GpmSampleGet(d, s2));
    nvml::GpmMetricsGet get{};
    get.version = nvml::kGpmMetricsGetVersion;
    get.sample1 = s1;
    get.sample2 = s2;
    for (unsigned id : {nvml::GPM_GRAPHICS_UTIL, nvml::GPM_SM_UTIL, nvml::GPM_SM_OCCUPANCY, nvml::GPM_ANY_TENSOR_UTIL,
                        nvml::GPM_DRAM_BW_UTIL, nvml::GPM_PCIE_TX_PER_SEC, nvml::GPM_PCIE_RX_PER_SEC,
                        nvml::GPM_NVLINK_TOTAL_TX_PER_SEC, nvml::GPM_NVLINK_TOTAL_RX_PER_SEC})
      get.metrics[get.num_metrics++].metric_id = id;
    nvml::Return rc = a.GpmMetricsGet(&get);
    gpm["metrics_get"] = nvml::return_code_name(rc);
    json metrics = json::array();
    for (unsigned i = 0; i < get.num_metrics; ++i) {
      const nvml::GpmMetric& m = get.metrics[i];
      auto str = [](const char* p) { return p ? json(std::string(p)) : json(nullptr); };
      metrics.push_back({{"id", m.metric_id},
                         {"return", nvml::return_code_name(m.nvml_return)},
                         {"value", m.value},
                         {"short_name", str(m.metric_info.short_name)},
                         {"long_name", str(m.metric_info.long_name)},
                         {"unit", str(m.metric_info.unit)}});
      if (rc == nvml::SUCCESS && m.nvml_return == nvml::SUCCESS && m.metric_id <= nvml::GPM_DRAM_BW_UTIL) {
        EXPECT_GE(m.value, 0.0) << "metric " << m.metric_id;
        EXPECT_LE(m.value, 100.5) << "metric " << m.metric_id;  // a percentage, if the layout is right
      }
    }
    gpm["metrics"] = metrics;
    if (s1) a.GpmSampleFree(s1);
    if (s2) a.GpmSampleFree(s2);
    // Through the sampler: its second sample (the one of the 50 above) has the fields.
    dump["gpm_sampled"] = to_json(sampler.sample()[0]);
  }
  dump["gpm"] = gpm;

  // The field-value batch against the driver: every field sample_device asks for, with its return code and type,
  // next to what the getters answered (the batch must agree with them).
  {
    const unsigned ids[] = {nvml::field::kTotalEnergy,
                            nvml::field::kPcieReplayCounter,
                            nvml::field::kEccCurrent,
                            nvml::field::kEccPending,
                            nvml::field::kEccSbeVolTotal,
                            nvml::field::kEccDbeVolTotal,
                            nvml::field::kEccSbeAggTotal,
                            nvml::field::kEccDbeAggTotal,
                            nvml::field::kRetiredPending,
                            nvml::field::kRemappedCor,
                            nvml::field::kRemappedUnc,
                            nvml::field::kRemappedPending,
                            nvml::field::kRemappedFailure,
                            nvml::kFieldGpuRecoveryAction,
                            nvml::field::nvlink_error(nvml::NVLINK_CRC_FLIT, 0),
                            nvml::field::nvlink_error(nvml::NVLINK_REPLAY, 7)};
    std::vector<nvml::FieldValue> fv(std::size(ids));
    for (size_t i = 0; i < fv.size(); ++i) fv[i].field_id = ids[i];
    json fields;
    fields["call"] = nvml::return_code_name(a.DeviceGetFieldValues(d, static_cast<int>(fv.size()), fv.data()));
    json each = json::array();
    for (const auto& f : fv)
      each.push_back({{"id", f.field_id},
                      {"return", nvml::return_code_name(f.nvml_return)},
                      {"type", f.value_type},
                      {"ull", f.value_type == nvml::VALUE_ULL ? json(f.value.ull) : json(f.value.ui)}});
    fields["values"] = each;
    dump["field_values"] = fields;
  }

  // A process on the GPU (started by the check script with a Slurm-like environment) is attributed to its job.
  if (const char* pid = std::getenv("GCM_EXPECT_GPU_PID")) {
    auto again = sampler.sample();
    bool found = false;
    for (const auto& r : again)
      if (r.sample.processes)
        for (const auto& p : *r.sample.processes) found |= p.pid == static_cast<unsigned>(std::atoi(pid));
    dump["expected_pid_seen"] = found;
    AttributionOptions o;
    auto jobs = attribute_gpus(again, o);
    dump["attributed_job"] = jobs.count(0) ? json(jobs[0][0].job_id) : json(nullptr);
    EXPECT_TRUE(found) << "pid " << pid << " not among the GPU's processes (containers may hide it)";
    if (found) {
      ASSERT_EQ(jobs.count(0), 1u);
      EXPECT_EQ(jobs[0][0].job_id, 777);
    }
  }
  if (const char* out = std::getenv("GCM_NVML_DUMP")) std::ofstream(out) << dump.dump(1) << "\n";
}

}  // namespace
}  // namespace gcm
