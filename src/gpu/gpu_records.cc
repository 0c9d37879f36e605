#include "gpu/gpu_records.h"

#include <fstream>
#include <sstream>

#include "core/schema.h"

namespace gcm {

namespace {

using FT = FieldType;
using FR = FieldRole;

// The reference's DeviceMetrics fields, shared by the LOG and METRIC records.
std::vector<FieldSpec> device_metric_fields() {
  return {
      {"mem_util", FT::Int, FR::Gauge, "percent", "memory controller utilisation", "gpu_memory_utilization"},
      {"mem_used_percent", FT::Int, FR::Gauge, "percent", "framebuffer memory used (-1: unknown)", "gpu_memory_used"},
      {"gpu_util", FT::Int, FR::Gauge, "percent", "GPU utilisation (kernels running)", "gpu_utilization"},
      {"temperature", FT::Int, FR::Gauge, "celsius", "GPU temperature", "gpu_temperature"},
      {"power_draw", FT::Int, FR::Attribute, "", "power draw in milliwatts (raw NVML; see power_watts)"},
      {"power_used_percent", FT::Int, FR::Gauge, "percent", "power draw over the enforced limit", "gpu_power_used"},
      {"retired_pages_count_single_bit", FT::Int, FR::Gauge, "", "pages retired for multiple single-bit ECC errors",
       "gpu_retired_pages_single_bit"},
      {"retired_pages_count_double_bit", FT::Int, FR::Gauge, "", "pages retired for a double-bit ECC error",
       "gpu_retired_pages_double_bit"},
  };
}

const std::vector<FieldSpec> kJobFields = {
    {"job_id", FT::Int, FR::Attribute, "", "Slurm job id (-1: none)"},
    {"job_user", FT::String, FR::Attribute, "", "SLURM_JOB_USER"},
    {"job_gpus", FT::String, FR::Attribute, "", "GPU_DEVICE_ORDINAL"},
    {"job_num_gpus", FT::Int, FR::Attribute, "", "GPUs of the job on this node"},
    {"job_num_cpus", FT::Int, FR::Attribute, "", "SLURM_CPUS_ON_NODE"},
    {"job_name", FT::String, FR::Attribute, "", "SLURM_JOB_NAME"},
    {"job_num_nodes", FT::Int, FR::Attribute, "", "SLURM_NNODES"},
    {"job_partition", FT::String, FR::Attribute, "", "SLURM_JOB_PARTITION"},
    {"job_cpus_per_gpu", FT::Double, FR::Attribute, "", "job_num_cpus / job_num_gpus"},
};

Schema make_device_plus_job() {
  Schema s;
  s.name = "DevicePlusJobMetrics";
  s.description = "One GPU over the push window (maximum of each metric) and the Slurm job using it.";
  s.metric_prefix = "gpu";
  s.data_type = DataType::Log;
  s.fields = device_metric_fields();
  for (auto& f : s.fields) f.role = FR::Attribute;  // a LOG row: its numbers are not series
  s.fields.insert(s.fields.end(), kJobFields.begin(), kJobFields.end());
  s.fields.push_back({"gpu_id", FT::Int, FR::Attribute, "", "GPU index"});
  s.fields.push_back({"hostname", FT::String, FR::Attribute, "", "host name without .maas"});
  return s;
}

Schema make_indexed_device() {
  Schema s;
  s.name = "IndexedDeviceMetrics";
  s.description = "One GPU over the push window: the reference's DeviceMetrics plus every extended NVML field.";
  s.metric_prefix = "gpu";
  s.data_type = DataType::Metric;
  s.fields = {
      {"gpu", FT::Int, FR::Identity, "", "GPU index"},
      {"uuid", FT::String, FR::Identity, "", "GPU UUID"},
      {"gpu_index", FT::Int, FR::Attribute, "", "GPU index (the reference's key)"},
      {"hostname", FT::String, FR::Attribute, "", "host name"},
      {"up", FT::Int, FR::Gauge, "", "1 when the GPU answered this window's last sample, 0 when lost or hung",
       "gpu_up"},
      {"state", FT::String, FR::Attribute, "", "ok, not_responding, lost or error"},
      {"state_detail", FT::String, FR::Attribute, "", "why the GPU is not ok"},
      {"vendor", FT::String, FR::Attribute, "", "nvidia (NVML) or amd (amdsmi): the library that read the GPU"},
  };
  for (auto& f : device_metric_fields()) s.fields.push_back(f);
  std::vector<FieldSpec> ext = {
      {"name", FT::String, FR::Attribute, "", "product name"},
      {"serial", FT::String, FR::Attribute, "", "board serial number"},
      {"pci_bus_id", FT::String, FR::Attribute, "", "PCI bus id (domain:bus:device.function)"},
      {"vbios_version", FT::String, FR::Attribute, "", "VBIOS version"},
      {"driver_version", FT::String, FR::Attribute, "", "driver version"},
      {"power_watts", FT::Double, FR::Gauge, "watts", "power draw", "gpu_power"},
      {"power_limit_watts", FT::Double, FR::Gauge, "watts", "enforced power limit", "gpu_power_limit"},
      {"energy_joules", FT::Double, FR::Counter, "joules", "energy used since the driver loaded", "gpu_energy"},
      {"memory_total_bytes", FT::Int, FR::Gauge, "bytes", "framebuffer memory", "gpu_memory_total"},
      {"memory_used_bytes", FT::Int, FR::Gauge, "bytes", "framebuffer memory used", "gpu_memory_used"},
      {"clock_graphics_hertz", FT::Int, FR::Gauge, "hertz", "graphics clock", "gpu_clock_graphics"},
      {"clock_sm_hertz", FT::Int, FR::Gauge, "hertz", "SM clock", "gpu_clock_sm"},
      {"clock_mem_hertz", FT::Int, FR::Gauge, "hertz", "memory clock", "gpu_clock_memory"},
      {"app_clock_graphics_hertz", FT::Int, FR::Gauge, "hertz", "applications graphics clock",
       "gpu_applications_clock_graphics"},
      {"app_clock_mem_hertz", FT::Int, FR::Gauge, "hertz", "applications memory clock",
       "gpu_applications_clock_memory"},
      {"max_clock_graphics_hertz", FT::Int, FR::Gauge, "hertz", "maximum graphics clock", "gpu_max_clock_graphics"},
      {"max_clock_sm_hertz", FT::Int, FR::Gauge, "hertz", "maximum SM clock", "gpu_max_clock_sm"},
      {"max_clock_mem_hertz", FT::Int, FR::Gauge, "hertz", "maximum memory clock", "gpu_max_clock_memory"},
      {"clock_event_reasons", FT::Int, FR::Gauge, "", "clock event (throttle) reason bit mask",
       "gpu_clock_event_reasons"},
      {"clock_event_reason_names", FT::String, FR::Attribute, "", "decoded reasons, comma-separated"},
      {"pcie_link_gen", FT::Int, FR::Gauge, "", "current PCIe generation", "gpu_pcie_link_generation"},
      {"pcie_link_width", FT::Int, FR::Gauge, "", "current PCIe lanes", "gpu_pcie_link_width"},
      {"pcie_link_gen_max", FT::Int, FR::Gauge, "", "maximum PCIe generation", "gpu_pcie_link_generation_max"},
      {"pcie_link_width_max", FT::Int, FR::Gauge, "", "maximum PCIe lanes", "gpu_pcie_link_width_max"},
      {"pcie_replay_count", FT::Int, FR::Counter, "", "PCIe replays", "gpu_pcie_replays"},
      {"pcie_tx_bytes_per_second", FT::Int, FR::Gauge, "", "PCIe transmit throughput", "gpu_pcie_tx_bytes_per_second"},
      {"pcie_rx_bytes_per_second", FT::Int, FR::Gauge, "", "PCIe receive throughput", "gpu_pcie_rx_bytes_per_second"},
      {"nvlink_links_active", FT::Int, FR::Gauge, "", "NVLinks up", "gpu_nvlink_links_active"},
      {"nvlink_links_total", FT::Int, FR::Gauge, "", "NVLinks the GPU has", "gpu_nvlink_links"},
      {"nvlink_crc_flit_errors", FT::Int, FR::Counter, "", "NVLink CRC flit errors (all links)",
       "gpu_nvlink_crc_flit_errors"},
      {"nvlink_crc_data_errors", FT::Int, FR::Counter, "", "NVLink CRC data errors (all links)",
       "gpu_nvlink_crc_data_errors"},
      {"nvlink_replay_errors", FT::Int, FR::Counter, "", "NVLink replays (all links)", "gpu_nvlink_replay_errors"},
      {"nvlink_recovery_errors", FT::Int, FR::Counter, "", "NVLink recoveries (all links)",
       "gpu_nvlink_recovery_errors"},
      {"nvlinks", FT::List, FR::Attribute, "", "per link: link, active and its error counters"},
      {"ecc_mode_current", FT::Int, FR::Gauge, "", "ECC enabled (1) or not (0)", "gpu_ecc_mode"},
      {"ecc_mode_pending", FT::Int, FR::Gauge, "", "ECC mode after the next reboot", "gpu_ecc_mode_pending"},
      {"ecc_volatile_corrected", FT::Int, FR::Counter, "", "corrected ECC errors since the driver loaded",
       "gpu_ecc_volatile_corrected_errors"},
      {"ecc_volatile_uncorrected", FT::Int, FR::Counter, "", "uncorrected ECC errors since the driver loaded",
       "gpu_ecc_volatile_uncorrected_errors"},
      {"ecc_aggregate_corrected", FT::Int, FR::Counter, "", "corrected ECC errors over the GPU's life",
       "gpu_ecc_aggregate_corrected_errors"},
      {"ecc_aggregate_uncorrected", FT::Int, FR::Counter, "", "uncorrected ECC errors over the GPU's life",
       "gpu_ecc_aggregate_uncorrected_errors"},
      {"retired_pages_pending", FT::Int, FR::Gauge, "", "1 when a page retirement waits for a reboot",
       "gpu_retired_pages_pending"},
      {"remapped_rows_correctable", FT::Int, FR::Gauge, "", "rows remapped for correctable errors",
       "gpu_remapped_rows_correctable"},
      {"remapped_rows_uncorrectable", FT::Int, FR::Gauge, "", "rows remapped for uncorrectable errors",
       "gpu_remapped_rows_uncorrectable"},
      {"remapped_rows_pending", FT::Int, FR::Gauge, "", "1 when a remapping waits for a GPU reset",
       "gpu_remapped_rows_pending"},
      {"remapped_rows_failure", FT::Int, FR::Gauge, "", "1 when a remapping failed", "gpu_remapped_rows_failure"},
      {"fan_speed_percent", FT::Int, FR::Gauge, "percent", "fan speed", "gpu_fan_speed"},
      {"performance_state", FT::Int, FR::Gauge, "", "P-state (0 fastest .. 15, 32 unknown)", "gpu_performance_state"},
      {"persistence_mode", FT::Int, FR::Gauge, "", "persistence mode on (1) or off (0)", "gpu_persistence_mode"},
      {"recovery_action", FT::Int, FR::Gauge, "",
       "the driver's recovery action (0 none, 1 GPU reset, 2 node "
       "reboot, 3 drain P2P, 4 drain and reset)",
       "gpu_recovery_action"},
      {"recovery_action_name", FT::String, FR::Attribute, "", "recovery action by name"},
      {"process_count", FT::Int, FR::Gauge, "", "compute processes on the GPU", "gpu_processes"},
      {"processes", FT::List, FR::Attribute, "", "compute processes: pid and used_memory_bytes"},
      {"mig_mode_current", FT::Int, FR::Gauge, "", "MIG enabled (1) or not (0)", "gpu_mig_mode"},
      {"mig_mode_pending", FT::Int, FR::Gauge, "", "MIG mode after the next reset", "gpu_mig_mode_pending"},
      {"mig_device_count", FT::Int, FR::Gauge, "", "MIG devices configured", "gpu_mig_devices"},
      {"mig_devices", FT::List, FR::Attribute, "", "MIG devices: index, uuid, memory total and used"},
      {"nvml_errors", FT::List, FR::Attribute, "", "NVML calls that failed (other than not supported)"},
      {"nvml_calls", FT::Int, FR::Gauge, "", "NVML calls the last sample of this GPU made", "gpu_nvml_calls"},
      // AMD (amdsmi) only; null on NVIDIA GPUs.
      {"compute_partition", FT::String, FR::Attribute, "", "AMD compute partition mode (SPX, DPX, QPX, CPX)"},
      {"memory_partition", FT::String, FR::Attribute, "", "AMD memory partition mode (NPS1, NPS4, ...)"},
      {"bad_pages", FT::Int, FR::Gauge, "", "AMD: memory pages retired for ECC errors", "gpu_bad_pages"},
      {"bad_pages_pending", FT::Int, FR::Gauge, "", "AMD: bad pages waiting to be retired", "gpu_bad_pages_pending"},
      {"xgmi_error_status", FT::Int, FR::Gauge, "", "AMD: XGMI link error status (0 none, 1 one, 2 several)",
       "gpu_xgmi_error_status"},
      {"ecc_deferred", FT::Int, FR::Counter, "", "AMD: ECC errors deferred by the hardware",
       "gpu_ecc_deferred_errors"},
      {"amdsmi_errors", FT::List, FR::Attribute, "", "amdsmi calls that failed (other than not supported)"},
      {"amdsmi_calls", FT::Int, FR::Gauge, "", "amdsmi calls the last sample of this GPU made", "gpu_amdsmi_calls"},
      // GPM (Hopper and later): over the interval between two samples; null on the first and without GPM.
      {"gpm_graphics_activity", FT::Double, FR::Gauge, "ratio", "time any graphics/compute engine was active (GPM)",
       "gpu_gpm_graphics_activity"},
      {"gpm_sm_activity", FT::Double, FR::Gauge, "ratio", "SMs busy, averaged over the SMs (GPM)",
       "gpu_gpm_sm_activity"},
      {"gpm_sm_occupancy", FT::Double, FR::Gauge, "ratio", "warps resident over the SMs' maximum (GPM)",
       "gpu_gpm_sm_occupancy"},
      {"gpm_tensor_activity", FT::Double, FR::Gauge, "ratio", "time the SMs ran any tensor-core instruction (GPM)",
       "gpu_gpm_tensor_activity"},
      {"gpm_dram_activity", FT::Double, FR::Gauge, "ratio", "DRAM bandwidth used over its maximum (GPM)",
       "gpu_gpm_dram_activity"},
      {"gpm_pcie_tx_bytes_per_second", FT::Double, FR::Gauge, "", "PCIe bytes sent by the GPU per second (GPM)",
       "gpu_gpm_pcie_tx_bytes_per_second"},
      {"gpm_pcie_rx_bytes_per_second", FT::Double, FR::Gauge, "", "PCIe bytes received by the GPU per second (GPM)",
       "gpu_gpm_pcie_rx_bytes_per_second"},
      {"gpm_nvlink_tx_bytes_per_second", FT::Double, FR::Gauge, "", "NVLink bytes sent per second, all links (GPM)",
       "gpu_gpm_nvlink_tx_bytes_per_second"},
      {"gpm_nvlink_rx_bytes_per_second", FT::Double, FR::Gauge, "", "NVLink bytes received per second, all links (GPM)",
       "gpu_gpm_nvlink_rx_bytes_per_second"},
  };
  s.fields.insert(s.fields.end(), ext.begin(), ext.end());
  return s;
}

Schema make_host_metrics() {
  Schema s;
  s.name = "HostMetrics";
  s.description = "GPU utilisation across the host's GPUs and RAM use.";
  s.metric_prefix = "gpu";
  s.data_type = DataType::Metric;
  s.fields = {
      {"max_gpu_util", FT::Int, FR::Gauge, "percent", "highest GPU utilisation", "gpu_host_max_utilization"},
      {"min_gpu_util", FT::Int, FR::Gauge, "percent", "lowest GPU utilisation", "gpu_host_min_utilization"},
      {"avg_gpu_util", FT::Double, FR::Gauge, "percent", "mean GPU utilisation", "gpu_host_avg_utilization"},
      {"ram_util", FT::Double, FR::Gauge, "ratio", "RAM used (MemTotal - MemAvailable) over MemTotal", "host_ram_util"},
  };
  return s;
}

Schema make_job_info() {
  Schema s;
  s.name = "GpuJobInfo";
  s.description =
      "Join series: which Slurm job (and, on Kubernetes, which pod) uses which GPU (value 1), to attribute any GPU "
      "series to a job or a pod.";
  s.metric_prefix = "gpu";
  s.data_type = DataType::Metric;
  s.fields = {
      {"gpu", FT::Int, FR::Identity, "", "GPU index"},
      {"uuid", FT::String, FR::Identity, "", "GPU UUID"},
      {"job_id", FT::Int, FR::Identity, "", "Slurm job id"},
      {"user", FT::String, FR::Identity, "", "job user"},
      {"account", FT::String, FR::Identity, "", "job account"},
      {"partition", FT::String, FR::Identity, "", "job partition"},
      {"pod", FT::String, FR::Identity, "", "Kubernetes pod holding the GPU (attribution kubelet)"},
      {"namespace", FT::String, FR::Identity, "", "the pod's namespace"},
      {"container", FT::String, FR::Identity, "", "the container the kubelet gave the GPU to"},
      {"info", FT::Int, FR::Gauge, "", "always 1", "gpu_job_info"},
  };
  return s;
}

template <typename T>
Value opt(const std::optional<T>& v) {
  return v ? Value(*v) : Value();
}
Value mhz_to_hz(const std::optional<int64_t>& v) { return v ? Value(*v * 1000000) : Value(); }
Value opt_u(const std::optional<uint64_t>& v) { return v ? Value(static_cast<int64_t>(*v)) : Value(); }

}  // namespace

constinit const LazySchema kDevicePlusJobMetrics{make_device_plus_job};
constinit const LazySchema kIndexedDeviceMetrics{make_indexed_device};
constinit const LazySchema kHostMetrics{make_host_metrics};
constinit const LazySchema kGpuJobInfo{make_job_info};

static const bool kGpuRecordsRegistered = register_schema(&kDevicePlusJobMetrics) &&
                                          register_schema(&kIndexedDeviceMetrics) && register_schema(&kHostMetrics) &&
                                          register_schema(&kGpuJobInfo);

Record device_metrics_record(const DeviceResult& r, const std::string& hostname, const std::string& driver_version,
                             const std::optional<std::string>& known_uuid) {
  Record rec(kIndexedDeviceMetrics);
  const GpuSample& s = r.sample;
  auto set = [&](std::string_view field, Value v) { rec.at(field) = std::move(v); };
  set("gpu", static_cast<int64_t>(r.index));
  set("gpu_index", static_cast<int64_t>(r.index));
  set("uuid", s.uuid ? Value(*s.uuid) : opt(known_uuid));
  set("hostname", hostname);
  set("state", to_string(r.state));
  if (r.vendor) set("vendor", r.vendor);
  const bool amd = r.vendor && std::string_view(r.vendor) == "amd";
  set("compute_partition", opt(s.compute_partition));
  set("memory_partition", opt(s.memory_partition));
  if (r.state != GpuState::Ok) {
    set("up", int64_t{0});
    set("state_detail", r.detail);
    return rec;
  }
  set("up", int64_t{1});
  set("mem_util", opt(s.mem_util));
  set("mem_used_percent", s.mem_used_percent);
  set("gpu_util", opt(s.gpu_util));
  set("temperature", opt(s.temperature));
  set("power_draw", opt(s.power_draw_mw));
  set("power_used_percent", opt(s.power_used_percent));
  set("retired_pages_count_single_bit", opt(s.retired_pages_single));
  set("retired_pages_count_double_bit", opt(s.retired_pages_double));
  set("name", opt(s.name));
  set("serial", opt(s.serial));
  set("pci_bus_id", opt(s.pci_bus_id));
  set("vbios_version", opt(s.vbios_version));
  if (!driver_version.empty()) set("driver_version", driver_version);
  if (s.power_draw_mw) set("power_watts", static_cast<double>(*s.power_draw_mw) / 1000.0);
  if (s.power_limit_mw) set("power_limit_watts", static_cast<double>(*s.power_limit_mw) / 1000.0);
  if (s.energy_mj) set("energy_joules", static_cast<double>(*s.energy_mj) / 1000.0);
  set("memory_total_bytes", opt_u(s.memory_total_bytes));
  set("memory_used_bytes", opt_u(s.memory_used_bytes));
  set("clock_graphics_hertz", mhz_to_hz(s.clock_graphics_mhz));
  set("clock_sm_hertz", mhz_to_hz(s.clock_sm_mhz));
  set("clock_mem_hertz", mhz_to_hz(s.clock_mem_mhz));
  set("app_clock_graphics_hertz", mhz_to_hz(s.app_clock_graphics_mhz));
  set("app_clock_mem_hertz", mhz_to_hz(s.app_clock_mem_mhz));
  set("max_clock_graphics_hertz", mhz_to_hz(s.max_clock_graphics_mhz));
  set("max_clock_sm_hertz", mhz_to_hz(s.max_clock_sm_mhz));
  set("max_clock_mem_hertz", mhz_to_hz(s.max_clock_mem_mhz));
  if (s.clock_event_reasons) {
    set("clock_event_reasons", static_cast<int64_t>(*s.clock_event_reasons));
    std::string names;
    for (const auto& n : clock_event_reason_names(*s.clock_event_reasons)) names += (names.empty() ? "" : ",") + n;
    set("clock_event_reason_names", names);
  }
  set("pcie_link_gen", opt(s.pcie_link_gen));
  set("pcie_link_width", opt(s.pcie_link_width));
  set("pcie_link_gen_max", opt(s.pcie_link_gen_max));
  set("pcie_link_width_max", opt(s.pcie_link_width_max));
  set("pcie_replay_count", opt(s.pcie_replay_count));
  if (s.pcie_tx_kbps) set("pcie_tx_bytes_per_second", *s.pcie_tx_kbps * 1024);
  if (s.pcie_rx_kbps) set("pcie_rx_bytes_per_second", *s.pcie_rx_kbps * 1024);
  if (!s.nvlinks.empty()) {
    int64_t active = 0;
    std::optional<uint64_t> flit, data, replay, recovery;
    auto add = [](std::optional<uint64_t>& sum, const std::optional<uint64_t>& v) {
      if (v) sum = sum.value_or(0) + *v;
    };
    List links;
    for (const auto& l : s.nvlinks) {
      active += l.active;
      add(flit, l.crc_flit_errors);
      add(data, l.crc_data_errors);
      add(replay, l.replay_errors);
      add(recovery, l.recovery_errors);
      links.push_back(Object{{"link", static_cast<int64_t>(l.link)},
                             {"active", l.active},
                             {"crc_flit_errors", opt_u(l.crc_flit_errors)},
                             {"crc_data_errors", opt_u(l.crc_data_errors)},
                             {"replay_errors", opt_u(l.replay_errors)},
                             {"recovery_errors", opt_u(l.recovery_errors)}});
    }
    set("nvlink_links_active", active);
    set("nvlink_links_total", static_cast<int64_t>(s.nvlinks.size()));
    set("nvlink_crc_flit_errors", opt_u(flit));
    set("nvlink_crc_data_errors", opt_u(data));
    set("nvlink_replay_errors", opt_u(replay));
    set("nvlink_recovery_errors", opt_u(recovery));
    set("nvlinks", std::move(links));
  }
  set("ecc_mode_current", opt(s.ecc_mode_current));
  set("ecc_mode_pending", opt(s.ecc_mode_pending));
  set("ecc_volatile_corrected", opt_u(s.ecc_volatile_corrected));
  set("ecc_volatile_uncorrected", opt_u(s.ecc_volatile_uncorrected));
  set("ecc_aggregate_corrected", opt_u(s.ecc_aggregate_corrected));
  set("ecc_aggregate_uncorrected", opt_u(s.ecc_aggregate_uncorrected));
  set("retired_pages_pending", opt(s.retired_pages_pending));
  set("remapped_rows_correctable", opt(s.remapped_rows_correctable));
  set("remapped_rows_uncorrectable", opt(s.remapped_rows_uncorrectable));
  set("remapped_rows_pending", opt(s.remapped_rows_pending));
  set("remapped_rows_failure", opt(s.remapped_rows_failure));
  set("fan_speed_percent", opt(s.fan_speed_percent));
  set("performance_state", opt(s.performance_state));
  set("persistence_mode", opt(s.persistence_mode));
  if (s.recovery_action) {
    set("recovery_action", *s.recovery_action);
    set("recovery_action_name", recovery_action_name(*s.recovery_action));
  }
  if (s.processes) {
    set("process_count", static_cast<int64_t>(s.processes->size()));
    List procs;
    for (const auto& p : *s.processes)
      procs.push_back(Object{{"pid", static_cast<int64_t>(p.pid)}, {"used_memory_bytes", opt_u(p.used_memory_bytes)}});
    set("processes", std::move(procs));
  }
  set("mig_mode_current", opt(s.mig_mode_current));
  set("mig_mode_pending", opt(s.mig_mode_pending));
  if (s.mig_mode_current) {
    set("mig_device_count", static_cast<int64_t>(s.mig_devices.size()));
    List migs;
    for (const auto& m : s.mig_devices)
      migs.push_back(Object{{"index", static_cast<int64_t>(m.index)},
                            {"uuid", opt(m.uuid)},
                            {"memory_total_bytes", opt_u(m.memory_total_bytes)},
                            {"memory_used_bytes", opt_u(m.memory_used_bytes)}});
    set("mig_devices", std::move(migs));
  }
  if (!s.errors.empty()) {
    List errs(s.errors.begin(), s.errors.end());
    set(amd ? "amdsmi_errors" : "nvml_errors", std::move(errs));
  }
  set(amd ? "amdsmi_calls" : "nvml_calls", s.nvml_calls);
  set("bad_pages", opt(s.bad_pages));
  set("bad_pages_pending", opt(s.bad_pages_pending));
  set("xgmi_error_status", opt(s.xgmi_error_status));
  set("ecc_deferred", opt_u(s.ecc_deferred));
  set("gpm_graphics_activity", opt(s.gpm_graphics_activity));
  set("gpm_sm_activity", opt(s.gpm_sm_activity));
  set("gpm_sm_occupancy", opt(s.gpm_sm_occupancy));
  set("gpm_tensor_activity", opt(s.gpm_tensor_activity));
  set("gpm_dram_activity", opt(s.gpm_dram_activity));
  set("gpm_pcie_tx_bytes_per_second", opt(s.gpm_pcie_tx_bytes_per_second));
  set("gpm_pcie_rx_bytes_per_second", opt(s.gpm_pcie_rx_bytes_per_second));
  set("gpm_nvlink_tx_bytes_per_second", opt(s.gpm_nvlink_tx_bytes_per_second));
  set("gpm_nvlink_rx_bytes_per_second", opt(s.gpm_nvlink_rx_bytes_per_second));
  return rec;
}

void max_merge(Record& acc, const Record& next) {
  for (size_t i = 0; i < acc.values.size(); ++i) {
    const Value& n = next.values[i];
    Value& a = acc.values[i];
    if (n.is_null()) continue;
    if (a.is_null() || !n.is_number() || !a.is_number()) {
      a = n;
    } else if (n.as_number() > a.as_number()) {
      a = n;
    }
  }
}

Record device_plus_job_record(const Record& metrics, const JobInfo& job, unsigned gpu_id, const std::string& hostname) {
  Record rec(kDevicePlusJobMetrics);
  for (const auto& f : device_metric_fields()) rec.at(f.name) = metrics.at(f.name);
  if (rec.at("mem_used_percent").is_null()) rec.at("mem_used_percent") = int64_t{-1};
  rec.at("job_id") = job.job_id;
  rec.at("job_user") = opt(job.job_user);
  rec.at("job_gpus") = opt(job.job_gpus);
  rec.at("job_num_gpus") = opt(job.job_num_gpus);
  rec.at("job_num_cpus") = opt(job.job_num_cpus);
  rec.at("job_name") = opt(job.job_name);
  rec.at("job_num_nodes") = opt(job.job_num_nodes);
  rec.at("job_partition") = opt(job.job_partition);
  rec.at("job_cpus_per_gpu") = opt(job.job_cpus_per_gpu);
  rec.at("gpu_id") = static_cast<int64_t>(gpu_id);
  rec.at("hostname") = hostname;
  return rec;
}

Record job_info_record(unsigned gpu, const std::optional<std::string>& uuid, const JobInfo& job) {
  Record rec(kGpuJobInfo);
  rec.at("gpu") = static_cast<int64_t>(gpu);
  rec.at("uuid") = opt(uuid);
  rec.at("job_id") = job.has_job() ? Value(job.job_id) : Value();
  rec.at("user") = opt(job.job_user);
  rec.at("account") = opt(job.job_account);
  rec.at("partition") = opt(job.job_partition);
  rec.at("pod") = opt(job.pod);
  rec.at("namespace") = opt(job.pod_namespace);
  rec.at("container") = opt(job.container);
  rec.at("info") = int64_t{1};
  return rec;
}

Record host_metrics_record(const std::vector<Record>& devices, std::optional<double> ram_util) {
  Record rec(kHostMetrics);
  int64_t mx = 0, mn = 0;
  double sum = 0;
  int n = 0;
  for (const auto& d : devices) {
    const Value& u = d.at("gpu_util");
    if (!u.is_number()) continue;
    int64_t v = static_cast<int64_t>(u.as_number());
    mx = n == 0 ? v : std::max(mx, v);
    mn = n == 0 ? v : std::min(mn, v);
    sum += static_cast<double>(v);
    ++n;
  }
  rec.at("max_gpu_util") = mx;
  rec.at("min_gpu_util") = mn;
  rec.at("avg_gpu_util") = n ? sum / n : 0.0;
  rec.at("ram_util") = opt(ram_util);
  return rec;
}

std::optional<double> read_ram_util(const std::string& procfs) {
  std::ifstream in(procfs + "/meminfo");
  if (!in) return std::nullopt;
  std::string key;
  int64_t value = 0;
  std::string unit;
  std::optional<int64_t> total, available;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemTotal:") total = value;
    if (key == "MemAvailable:") available = value;
  }
  if (!total || !available || *total <= 0) return std::nullopt;
  return static_cast<double>(*total - *available) / static_cast<double>(*total);
}

}  // namespace gcm
