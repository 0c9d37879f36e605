// What one sample of one GPU holds. Every value is optional: a call the GPU does not support (NOT_SUPPORTED), an
// entry point the driver lacks, or a call that failed leaves it empty, and the record shows null.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gcm {

struct GpuProcess {
  uint32_t pid = 0;
  std::optional<uint64_t> used_memory_bytes;  // null when the driver reports "not available"
};

struct NvLinkSample {
  unsigned link = 0;
  bool active = false;
  std::optional<uint64_t> replay_errors, recovery_errors, crc_flit_errors, crc_data_errors;
};

struct MigDeviceSample {
  unsigned index = 0;
  std::optional<std::string> uuid;
  std::optional<uint64_t> memory_total_bytes, memory_used_bytes;
};

struct GpuSample {
  // Identity and static properties.
  std::optional<std::string> name, uuid, serial, pci_bus_id, vbios_version;
  std::optional<int64_t> minor_number;  // N of /dev/nvidiaN
  // AMD: the compute partition (SPX, DPX, TPX, QPX, CPX) and memory partition (NPS1, NPS2, NPS4, NPS8) mode.
  std::optional<std::string> compute_partition, memory_partition;
  // The reference's DeviceMetrics.
  std::optional<int64_t> gpu_util, mem_util, temperature, power_draw_mw, power_limit_mw;
  int64_t mem_used_percent = -1;  // the reference initialises it to -1 and keeps -1 when the call fails
  std::optional<int64_t> retired_pages_single, retired_pages_double;
  std::optional<int64_t> power_used_percent;
  // Extended.
  std::optional<uint64_t> memory_total_bytes, memory_used_bytes;
  std::optional<uint64_t> energy_mj;
  std::optional<int64_t> clock_graphics_mhz, clock_sm_mhz, clock_mem_mhz;
  std::optional<int64_t> app_clock_graphics_mhz, app_clock_mem_mhz;
  std::optional<int64_t> max_clock_graphics_mhz, max_clock_sm_mhz, max_clock_mem_mhz;
  std::optional<uint64_t> clock_event_reasons;
  std::optional<int64_t> pcie_link_gen, pcie_link_width, pcie_link_gen_max, pcie_link_width_max;
  std::optional<int64_t> pcie_replay_count, pcie_tx_kbps, pcie_rx_kbps;
  std::vector<NvLinkSample> nvlinks;  // only links the GPU has (NOT_SUPPORTED ends the list)
  std::optional<int64_t> ecc_mode_current, ecc_mode_pending;
  std::optional<uint64_t> ecc_volatile_corrected, ecc_volatile_uncorrected;
  std::optional<uint64_t> ecc_aggregate_corrected, ecc_aggregate_uncorrected;
  std::optional<int64_t> retired_pages_pending;
  std::optional<int64_t> remapped_rows_correctable, remapped_rows_uncorrectable, remapped_rows_pending,
      remapped_rows_failure;
  std::optional<int64_t> fan_speed_percent, performance_state, persistence_mode;
  std::optional<int64_t> recovery_action;
  std::optional<std::vector<GpuProcess>> processes;
  std::optional<int64_t> mig_mode_current, mig_mode_pending;
  std::vector<MigDeviceSample> mig_devices;
  // GPM (Hopper and later; gpm_sampler.h), computed between this sample and the previous one of the same GPU, so
  // empty on the first sample and on GPUs or drivers without GPM. Activities are ratios 0..1 (NVML reports percent
  // 0-100; divided by 100 here); bandwidths are bytes/s (NVML reports MiB/s).
  std::optional<double> gpm_graphics_activity, gpm_sm_activity, gpm_sm_occupancy, gpm_tensor_activity,
      gpm_dram_activity;
  std::optional<double> gpm_pcie_tx_bytes_per_second, gpm_pcie_rx_bytes_per_second;
  std::optional<double> gpm_nvlink_tx_bytes_per_second, gpm_nvlink_rx_bytes_per_second;
  // AMD (amdsmi): pages retired for ECC errors (bad pages), the XGMI error status (0 none, 1 one error, 2 more),
  // ECC errors deferred by the hardware, and the throttling indicators of amdsmi_get_violation_status (each 0/1:
  // power (PPT), socket/VR/HBM thermal, PROCHOT) as clock_event_reasons bits too, so checks see one mask.
  std::optional<int64_t> bad_pages, bad_pages_pending, xgmi_error_status;
  std::optional<uint64_t> ecc_deferred;
  // Library calls this sample made for this GPU (NVML or amdsmi; the name is NVML's for the existing records).
  // NVML calls this sample made for this GPU (the first sample also reads the static properties).
  int64_t nvml_calls = 0;
  // Calls that failed with something other than NOT_SUPPORTED, as "nvmlDeviceGetX: <error>".
  std::vector<std::string> errors;
};

// Copies the identity (name, UUID, serial, bus id, VBIOS, minor, partitions) of one sample into another: a GPU
// that is not answering keeps it, with no measurement.
void copy_identity(const GpuSample& from, GpuSample& to);

// Names of the bits of a clock event (throttle) reason mask, e.g. {"sw_power_cap", "hw_thermal_slowdown"}.
std::vector<std::string> clock_event_reason_names(uint64_t mask);
// Name of a GPU recovery action (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION): "none", "gpu_reset", "node_reboot", ...
std::string recovery_action_name(int64_t action);

}  // namespace gcm
