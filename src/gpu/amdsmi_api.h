// The project's own declarations of the part of AMD's amdsmi C API (libamd_smi.so) that GCM calls, written from the
// public API reference (amdsmi is not packaged in Debian 12, so there is no header to include). Only types whose
// layout GCM reads are declared; each struct GCM passes to the library is read into a zeroed buffer of at least
// kStructSlack bytes, because the library's structs have grown between ROCm releases (reserved tails, per-XCP
// arrays) and a newer library must never write past the caller's memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gcm::amdsmi {

using Status = uint32_t;  // amdsmi_status_t
constexpr Status STATUS_SUCCESS = 0;
constexpr Status STATUS_INVAL = 1;
constexpr Status STATUS_NOT_SUPPORTED = 2;
constexpr Status STATUS_NOT_YET_IMPLEMENTED = 3;
constexpr Status STATUS_FAIL_LOAD_MODULE = 4;
constexpr Status STATUS_API_FAILED = 7;
constexpr Status STATUS_TIMEOUT = 8;
constexpr Status STATUS_NO_PERM = 10;
constexpr Status STATUS_IO = 12;
constexpr Status STATUS_OUT_OF_RESOURCES = 15;  // a list buffer too small (the process list)
constexpr Status STATUS_INIT_ERROR = 18;
constexpr Status STATUS_BUSY = 30;
constexpr Status STATUS_NOT_FOUND = 31;
constexpr Status STATUS_NOT_INIT = 32;
constexpr Status STATUS_DRIVER_NOT_LOADED = 34;
constexpr Status STATUS_NO_DATA = 40;
constexpr Status STATUS_INSUFFICIENT_SIZE = 41;
constexpr Status STATUS_UNKNOWN_ERROR = 0xFFFFFFFF;
// Not amdsmi's: what the loader's stub of an entry point the library does not export answers.
constexpr Status STATUS_GCM_FUNCTION_NOT_FOUND = 0xFFFFFF00;

// Symbolic name of a status ("AMDSMI_STATUS_NOT_SUPPORTED"), or nullptr; and back (-1 when unknown).
const char* status_name(Status s);
int64_t status_from_name(const char* name);

constexpr uint64_t kInitAmdGpus = 1u << 1;  // AMDSMI_INIT_AMD_GPUS

using SocketHandle = struct SocketOpaque*;        // amdsmi_socket_handle
using ProcessorHandle = struct ProcessorOpaque*;  // amdsmi_processor_handle

constexpr size_t kStructSlack = 16384;
constexpr unsigned kUuidSize = 38;  // AMDSMI_GPU_UUID_SIZE
constexpr unsigned kStringLength = 256;

// amdsmi_bdf_t: function (3 bits), device (5), bus (8), domain (48) packed in one uint64_t.
inline unsigned bdf_function(uint64_t v) { return v & 0x7; }
inline unsigned bdf_device(uint64_t v) { return (v >> 3) & 0x1f; }
inline unsigned bdf_bus(uint64_t v) { return (v >> 8) & 0xff; }
inline uint64_t bdf_domain(uint64_t v) { return v >> 16; }

struct EngineUsage {  // amdsmi_engine_usage_t (percent)
  uint32_t gfx_activity, umc_activity, mm_activity;
  uint32_t reserved[13];
};

struct PowerInfo {  // amdsmi_power_info_t as of ROCm 6.4 (watts)
  uint64_t socket_power;
  uint32_t current_socket_power, average_socket_power;
  uint64_t gfx_voltage, soc_voltage, mem_voltage;
  uint32_t power_limit;
  uint64_t reserved[18];
};

struct ErrorCount {  // amdsmi_error_count_t
  uint64_t correctable_count, uncorrectable_count, deferred_count;
  uint64_t reserved[5];
};

struct RetiredPageRecord {  // amdsmi_retired_page_record_t
  uint64_t page_address, page_size;
  uint32_t status;  // 0 reserved (retired), 1 pending, 2 unreservable
};

// amdsmi_violation_status_t, its leading fields (the per-XCP arrays that follow are not read). Counters and
// percentages are UINT64_MAX and flags UINT8_MAX where the GPU does not support them.
struct ViolationStatus {
  uint64_t reference_timestamp, violation_timestamp;
  uint64_t acc_counter, acc_prochot_thrm, acc_ppt_pwr, acc_socket_thrm, acc_vr_thrm, acc_hbm_thrm,
      acc_gfx_clk_below_host_limit;
  uint64_t per_prochot_thrm, per_ppt_pwr, per_socket_thrm, per_vr_thrm, per_hbm_thrm, per_gfx_clk_below_host_limit;
  uint8_t active_prochot_thrm, active_ppt_pwr, active_socket_thrm, active_vr_thrm, active_hbm_thrm,
      active_gfx_clk_below_host_limit;
};

struct ProcInfo {  // amdsmi_proc_info_t
  char name[kStringLength];
  uint32_t pid;
  uint64_t mem;  // bytes
  struct {
    uint64_t gfx, enc;
    uint32_t reserved[12];
  } engine_usage;
  struct {
    uint64_t gtt_mem, cpu_mem, vram_mem;
    uint32_t reserved[10];
  } memory_usage;
  char container_name[kStringLength];
  uint32_t cu_occupancy, evicted_time;
  uint32_t reserved[10];
};

// amdsmi_pcie_info_t, its leading fields.
struct PcieInfo {
  struct {
    uint16_t max_pcie_width;
    uint32_t max_pcie_speed;  // MT/s
    uint32_t pcie_interface_version;
    uint32_t slot_type;
    uint64_t reserved[10];
  } pcie_static;
  struct {
    uint16_t pcie_width;
    uint32_t pcie_speed;      // MT/s
    uint32_t pcie_bandwidth;  // Mb/s
    uint64_t pcie_replay_count, pcie_l0_to_recovery_count, pcie_replay_roll_over_count, pcie_nak_sent_count,
        pcie_nak_received_count;
    uint32_t pcie_lc_perf_other_end_recovery_count;
    uint64_t reserved[12];
  } pcie_metric;
  uint64_t reserved[32];
};

struct ClkInfo {  // amdsmi_clk_info_t (MHz)
  uint32_t clk, min_clk, max_clk;
  uint8_t clk_locked, clk_deep_sleep;
  uint32_t reserved[4];
};

constexpr int kTemperatureEdge = 0, kTemperatureHotspot = 1, kTemperatureVram = 2;  // amdsmi_temperature_type_t
constexpr int kTempCurrent = 0;                                                      // amdsmi_temperature_metric_t
constexpr int kClkGfx = 0, kClkMem = 4;  // amdsmi_clk_type_t: SYS (GFX) and MEM
constexpr int kMemVram = 0;              // amdsmi_memory_type_t
// amdsmi_xgmi_status_t
constexpr uint32_t kXgmiNoErrors = 0, kXgmiError = 1, kXgmiMultipleErrors = 2;

// Events (amdsmi_evt_notification_type_t), AMD's analogue of XIDs; a mask has bit (type - 1) set per type.
constexpr uint32_t kEvtVmFault = 1, kEvtThermalThrottle = 2, kEvtGpuPreReset = 3, kEvtGpuPostReset = 4,
                   kEvtRingHang = 16;
inline uint64_t event_mask_bit(uint32_t type) { return uint64_t{1} << (type - 1); }
constexpr unsigned kEventMessageSize = 64;
struct EventNotification {  // amdsmi_evt_notification_data_t
  ProcessorHandle processor_handle;
  uint32_t event;
  char message[kEventMessageSize];
};

// The entry points, resolved with dlsym (amdsmi_library.h); a missing optional one answers
// STATUS_GCM_FUNCTION_NOT_FOUND.
struct Api {
  Status (*Init)(uint64_t flags);
  Status (*ShutDown)();
  Status (*StatusCodeToString)(Status, const char**);
  Status (*GetSocketHandles)(uint32_t* count, SocketHandle* handles);
  Status (*GetProcessorHandles)(SocketHandle, uint32_t* count, ProcessorHandle* handles);
  Status (*GetGpuDeviceUuid)(ProcessorHandle, unsigned* len, char* uuid);
  Status (*GetGpuDeviceBdf)(ProcessorHandle, uint64_t* bdf);
  Status (*GetGpuActivity)(ProcessorHandle, EngineUsage*);
  Status (*GetPowerInfo)(ProcessorHandle, PowerInfo*);
  Status (*GetTempMetric)(ProcessorHandle, int sensor, int metric, int64_t* value);
  Status (*GetEnergyCount)(ProcessorHandle, uint64_t* accumulator, float* resolution_uj, uint64_t* timestamp);
  Status (*GetViolationStatus)(ProcessorHandle, ViolationStatus*);
  Status (*GetGpuTotalEccCount)(ProcessorHandle, ErrorCount*);
  Status (*GetGpuBadPageInfo)(ProcessorHandle, uint32_t* num_pages, RetiredPageRecord* records);
  Status (*GpuXgmiErrorStatus)(ProcessorHandle, uint32_t* status);
  Status (*GetGpuProcessList)(ProcessorHandle, uint32_t* max_processes, ProcInfo* list);
  Status (*GetGpuComputePartition)(ProcessorHandle, char* out, uint32_t len);
  Status (*GetGpuMemoryPartition)(ProcessorHandle, char* out, uint32_t len);
  Status (*GetGpuMemoryTotal)(ProcessorHandle, int type, uint64_t* total);
  Status (*GetGpuMemoryUsage)(ProcessorHandle, int type, uint64_t* used);
  Status (*GetClockInfo)(ProcessorHandle, int type, ClkInfo*);
  Status (*GetPcieInfo)(ProcessorHandle, PcieInfo*);
  Status (*InitGpuEventNotification)(ProcessorHandle);
  Status (*SetGpuEventNotificationMask)(ProcessorHandle, uint64_t mask);
  Status (*GetGpuEventNotification)(int timeout_ms, uint32_t* num_elem, EventNotification* data);
  Status (*StopGpuEventNotification)(ProcessorHandle);
  // Only the leading string of each of these two structs is read (market_name of amdsmi_asic_info_t,
  // driver_version of amdsmi_driver_info_t, kStringLength bytes each): the fields after it moved between releases.
  Status (*GetGpuAsicInfo)(ProcessorHandle, void* asic_info);
  Status (*GetGpuDriverInfo)(ProcessorHandle, void* driver_info);
};

}  // namespace gcm::amdsmi
