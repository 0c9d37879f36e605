// What the agent knows of one GPU over one window (default 30 s of 1 s samples): the input of the zombie-GPU
// detector. The agent builds it from its samples (agent/window.h); the detector's harness generates streams of it
// directly, so 100 simulated node-days run in seconds. Values are summaries over the window's answered samples;
// a field the GPU did not report in any sample is empty.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gcm::detector {

// One field over a window's samples.
struct FieldStats {
  double min = 0, max = 0, mean = 0, last = 0;
  int samples = 0;  // how many samples had the field
};

// How the GPU answered during the window.
enum class Presence {
  Ok,             // its last sample answered
  NotResponding,  // a call timed out in the last sample
  Lost,           // GPU_IS_LOST, or not responding for several rounds
};

// One XID seen during the window (from the kernel log or NVML events, de-duplicated).
struct WindowXid {
  int code = 0;
  std::string action;     // the catalogue's immediate action ("RESET_GPU", "RESTART_APP", "IGNORE", ...)
  bool critical = false;  // the catalogue's severity is critical
  std::string name;       // an AMD event's name ("RING_HANG", agent/amd_events.h); "" for an NVIDIA XID
};

struct GpuWindow {
  unsigned gpu = 0;  // NVML index
  std::string uuid;
  int64_t end_unix_ms = 0;  // when the window closed
  double seconds = 0;       // its length
  int samples = 0;          // samples taken (answered or not)
  Presence presence = Presence::Ok;
  std::string job_id;  // the job the GPU was attributed to at the end of the window; "" none

  // Performance signals (summaries over answered samples).
  std::optional<FieldStats> sm_clock_mhz, max_sm_clock_mhz;
  // The SM clock over the samples in which none of HW_SLOWDOWN, HW_THERMAL_SLOWDOWN, HW_POWER_BRAKE_SLOWDOWN was
  // set (empty when every sample had one): a slowdown that its own reason bit explains is that reason's business,
  // so the peer comparison judges these samples when the window had any.
  std::optional<FieldStats> sm_clock_unthrottled_mhz;
  std::optional<FieldStats> power_watts, power_limit_watts;
  std::optional<FieldStats> gpu_util_percent, mem_util_percent;
  std::optional<FieldStats> temperature_celsius;
  std::optional<double> slowdown_temperature_celsius;  // the GPU's slowdown threshold where known
  // NVML GPM (Hopper and later), ratios 0..1.
  std::optional<FieldStats> gpm_sm_activity, gpm_sm_occupancy, gpm_tensor_activity, gpm_dram_activity;

  // Fraction (0..1) of the window's answered samples in which each clock event reason was set.
  double hw_slowdown_fraction = 0;   // HW_SLOWDOWN (0x8)
  double hw_thermal_fraction = 0;    // HW_THERMAL_SLOWDOWN (0x40)
  double power_brake_fraction = 0;   // HW_POWER_BRAKE_SLOWDOWN (0x80)
  double sw_thermal_fraction = 0;    // SW_THERMAL_SLOWDOWN (0x20)
  double sw_power_cap_fraction = 0;  // SW_POWER_CAP (0x4)

  // PCIe: the last sample's link, and replays during the window.
  std::optional<int64_t> pcie_gen, pcie_width, pcie_gen_max, pcie_width_max;
  std::optional<int64_t> pcie_replays;  // increase of the replay counter over the window
  // NVLink: increases over the window, all links.
  std::optional<int64_t> nvlink_crc_errors, nvlink_replay_errors, nvlink_recovery_errors;
  std::optional<int64_t> nvlink_links_active;  // links whose state is active in the last answered sample
  // ECC and row remapping.
  std::optional<int64_t> ecc_uncorrected_volatile;                      // increase over the window
  std::optional<int64_t> remapped_rows_pending, remapped_rows_failure;  // last sample (1: set)

  std::vector<WindowXid> xids;  // XIDs seen during the window
  // PCIe AER errors the kernel logged during the window on the GPU's own PCI address, by severity (corrected ones
  // are counted by the agent but judged by nothing: only their rate says something).
  int pcie_aer_fatal = 0, pcie_aer_non_fatal = 0;

  // The job's own signal (jobsignal/rank_slow.h): whether the rank on this GPU was slower than the job's other ranks
  // this window. Clean when no job reports for the GPU; held when it reports but could not be judged.
  enum class RankSignal { Clean, Held, Slow };
  RankSignal rank_signal = RankSignal::Clean;
  std::string rank_evidence;  // the comparison, when Slow
};

}  // namespace gcm::detector
