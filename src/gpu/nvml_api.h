// The subset of NVML the project calls, declared here because nvml.h is not packaged on this platform. Layouts,
// enum values and symbol names follow NVIDIA's published ABI (versioned symbols such as nvmlInit_v2 are distinct
// exported names, not ELF symbol versions). The library is loaded at run time (see nvml_library.h), so one binary
// runs on hosts with any driver, or none.
#pragma once

#include <cstdint>

namespace gcm::nvml {

using Return = int;                         // nvmlReturn_t
using Device = struct DeviceOpaque*;        // nvmlDevice_t
using EventSet = struct EventSetOpaque*;    // nvmlEventSet_t
using GpmSample = struct GpmSampleOpaque*;  // nvmlGpmSample_t (a handle from nvmlGpmSampleAlloc)

enum : Return {
  SUCCESS = 0,
  ERROR_UNINITIALIZED = 1,
  ERROR_INVALID_ARGUMENT = 2,
  ERROR_NOT_SUPPORTED = 3,
  ERROR_NO_PERMISSION = 4,
  ERROR_ALREADY_INITIALIZED = 5,
  ERROR_NOT_FOUND = 6,
  ERROR_INSUFFICIENT_SIZE = 7,
  ERROR_INSUFFICIENT_POWER = 8,
  ERROR_DRIVER_NOT_LOADED = 9,
  ERROR_TIMEOUT = 10,
  ERROR_IRQ_ISSUE = 11,
  ERROR_LIBRARY_NOT_FOUND = 12,
  ERROR_FUNCTION_NOT_FOUND = 13,
  ERROR_CORRUPTED_INFOROM = 14,
  ERROR_GPU_IS_LOST = 15,
  ERROR_RESET_REQUIRED = 16,
  ERROR_OPERATING_SYSTEM = 17,
  ERROR_LIB_RM_VERSION_MISMATCH = 18,
  ERROR_IN_USE = 19,
  ERROR_MEMORY = 20,
  ERROR_NO_DATA = 21,
  ERROR_UNKNOWN = 999,
};

// Symbolic name of a return code ("GPU_IS_LOST"), for scenario files and log lines; "" when unknown.
const char* return_code_name(Return r);
// Inverse of return_code_name; -1 when unknown.
Return return_code_from_name(const char* name);

struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};

struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct PciInfo {  // nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  char bus_id[32];
};

struct ProcessInfo {  // nvmlProcessInfo_t (v2 layout), filled by nvmlDeviceGetComputeRunningProcesses_v3
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

struct EventData {  // nvmlEventData_t
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

union FieldValueUnion {
  double d;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  int si;
};

struct FieldValue {  // nvmlFieldValue_t
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;  // 0 double, 1 uint, 2 ulong, 3 ull, 4 sll, 5 int
  Return nvml_return;
  FieldValueUnion value;
};

// NVML GPM (GPU performance monitoring, Hopper and later). Fact source: NVML API reference, "GPM Structs"
// (nvmlGpmMetric_t, nvmlGpmMetricsGet_t, nvmlGpmSupport_t) and "GPM Enums" (nvmlGpmMetricId_t).
struct GpmMetric {         // nvmlGpmMetric_t
  unsigned int metric_id;  // IN: an nvmlGpmMetricId_t
  Return nvml_return;      // OUT: the value is valid only when SUCCESS
  double value;            // OUT
  struct {
    char* short_name;
    char* long_name;
    char* unit;
  } metric_info;  // OUT: owned by the library, may be null
};
// NVML_GPM_METRIC_MAX has grown between header releases (98, 210, 333) while NVML_GPM_METRICS_GET_VERSION stayed
// 1: the library reads only the first numMetrics entries. The array is sized to the largest value seen so a driver
// that touches the whole array of its own header still stays inside ours.
constexpr unsigned int kGpmMetricArray = 333;
struct GpmMetricsGet {       // nvmlGpmMetricsGet_t
  unsigned int version;      // kGpmMetricsGetVersion
  unsigned int num_metrics;  // entries of metrics[] to compute
  GpmSample sample1;
  GpmSample sample2;
  GpmMetric metrics[kGpmMetricArray];
};
constexpr unsigned int kGpmMetricsGetVersion = 1;  // NVML_GPM_METRICS_GET_VERSION
struct GpmSupport {                                // nvmlGpmSupport_t
  unsigned int version;                            // kGpmSupportVersion
  unsigned int is_supported_device;
};
constexpr unsigned int kGpmSupportVersion = 1;  // NVML_GPM_SUPPORT_VERSION
// nvmlGpmMetricId_t values the project asks for. Utilisations are percent (0.0 - 100.0), bandwidths MiB/s.
enum GpmMetricId : unsigned int {
  GPM_GRAPHICS_UTIL = 1,             // NVML_GPM_METRIC_GRAPHICS_UTIL
  GPM_SM_UTIL = 2,                   // NVML_GPM_METRIC_SM_UTIL
  GPM_SM_OCCUPANCY = 3,              // NVML_GPM_METRIC_SM_OCCUPANCY
  GPM_ANY_TENSOR_UTIL = 5,           // NVML_GPM_METRIC_ANY_TENSOR_UTIL
  GPM_DRAM_BW_UTIL = 10,             // NVML_GPM_METRIC_DRAM_BW_UTIL
  GPM_PCIE_TX_PER_SEC = 20,          // NVML_GPM_METRIC_PCIE_TX_PER_SEC
  GPM_PCIE_RX_PER_SEC = 21,          // NVML_GPM_METRIC_PCIE_RX_PER_SEC
  GPM_NVLINK_TOTAL_RX_PER_SEC = 60,  // NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC
  GPM_NVLINK_TOTAL_TX_PER_SEC = 61,  // NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC
};

// nvmlDeviceGetFieldValues ids (NVML API reference, "Field Value Enums", the NVML_FI_DEV_* defines).
namespace field {
constexpr unsigned int kEccCurrent = 1;          // NVML_FI_DEV_ECC_CURRENT
constexpr unsigned int kEccPending = 2;          // NVML_FI_DEV_ECC_PENDING
constexpr unsigned int kEccSbeVolTotal = 3;      // NVML_FI_DEV_ECC_SBE_VOL_TOTAL (corrected, volatile)
constexpr unsigned int kEccDbeVolTotal = 4;      // NVML_FI_DEV_ECC_DBE_VOL_TOTAL (uncorrected, volatile)
constexpr unsigned int kEccSbeAggTotal = 5;      // NVML_FI_DEV_ECC_SBE_AGG_TOTAL (corrected, aggregate)
constexpr unsigned int kEccDbeAggTotal = 6;      // NVML_FI_DEV_ECC_DBE_AGG_TOTAL (uncorrected, aggregate)
constexpr unsigned int kRetiredPending = 31;     // NVML_FI_DEV_RETIRED_PENDING
constexpr unsigned int kTotalEnergy = 83;        // NVML_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ)
constexpr unsigned int kPcieReplayCounter = 94;  // NVML_FI_DEV_PCIE_REPLAY_COUNTER
constexpr unsigned int kRemappedCor = 142;       // NVML_FI_DEV_REMAPPED_COR
constexpr unsigned int kRemappedUnc = 143;       // NVML_FI_DEV_REMAPPED_UNC
constexpr unsigned int kRemappedPending = 144;   // NVML_FI_DEV_REMAPPED_PENDING
constexpr unsigned int kRemappedFailure = 145;   // NVML_FI_DEV_REMAPPED_FAILURE
// Per-link NVLink error counters exist as fields for links 0-11 only: L0-L5 and L6-L11 are two runs of ids
// (NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_L0 = 32, ..._L6 = 96; CRC_DATA L0 = 39, L6 = 102; REPLAY L0 = 46,
// L6 = 108; RECOVERY L0 = 53, L6 = 114). Links 12-17 have no such field and keep nvmlDeviceGetNvLinkErrorCounter.
constexpr unsigned int kNvLinkFieldLinks = 12;
// The field id of `counter` (NvLinkErrorCounter) on `link` (< kNvLinkFieldLinks).
constexpr unsigned int nvlink_error(unsigned int counter, unsigned int link) {
  constexpr unsigned int low[] = {46, 53, 32, 39};      // REPLAY, RECOVERY, CRC_FLIT, CRC_DATA for L0
  constexpr unsigned int high[] = {108, 114, 96, 102};  // the same for L6
  return link < 6 ? low[counter] + link : high[counter] + (link - 6);
}
}  // namespace field
// nvmlValueType_t: how FieldValue::value is to be read.
enum ValueType : int {
  VALUE_DOUBLE = 0,
  VALUE_UINT = 1,
  VALUE_ULONG = 2,
  VALUE_ULL = 3,
  VALUE_SLL = 4,
  VALUE_SINT = 5
};

constexpr unsigned int kTemperatureGpu = 0;
enum ClockType : unsigned int { CLOCK_GRAPHICS = 0, CLOCK_SM = 1, CLOCK_MEM = 2, CLOCK_VIDEO = 3 };
enum PageRetirementCause : unsigned int { RETIRED_MULTIPLE_SINGLE_BIT = 0, RETIRED_DOUBLE_BIT = 1 };
enum MemoryErrorType : unsigned int { ECC_CORRECTED = 0, ECC_UNCORRECTED = 1 };
enum EccCounterType : unsigned int { ECC_VOLATILE = 0, ECC_AGGREGATE = 1 };
enum PcieUtilCounter : unsigned int { PCIE_TX = 0, PCIE_RX = 1 };
enum NvLinkErrorCounter : unsigned int {
  NVLINK_REPLAY = 0,
  NVLINK_RECOVERY = 1,
  NVLINK_CRC_FLIT = 2,
  NVLINK_CRC_DATA = 3
};
constexpr unsigned int kNvLinkMaxLinks = 18;
constexpr unsigned int kFieldGpuRecoveryAction = 230;  // NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
constexpr unsigned long long kEventTypeXidCriticalError = 0x8;
constexpr unsigned int kDeviceNameBuffer = 96;
constexpr unsigned int kUuidBuffer = 96;
constexpr unsigned int kSerialBuffer = 30;
constexpr unsigned int kVbiosBuffer = 32;
constexpr unsigned int kDriverVersionBuffer = 80;

// Function table: one pointer per NVML entry point the project uses. A pointer is null when the loaded library
// lacks the symbol (an older driver); callers treat that as NOT_SUPPORTED.
struct Api {
  Return (*Init)();
  Return (*Shutdown)();
  const char* (*ErrorString)(Return);
  Return (*SystemGetDriverVersion)(char*, unsigned int);
  Return (*DeviceGetCount)(unsigned int*);
  Return (*DeviceGetHandleByIndex)(unsigned int, Device*);
  Return (*DeviceGetName)(Device, char*, unsigned int);
  Return (*DeviceGetUUID)(Device, char*, unsigned int);
  Return (*DeviceGetSerial)(Device, char*, unsigned int);
  Return (*DeviceGetPciInfo)(Device, PciInfo*);
  Return (*DeviceGetMinorNumber)(Device, unsigned int*);
  Return (*DeviceGetVbiosVersion)(Device, char*, unsigned int);
  Return (*DeviceGetUtilizationRates)(Device, Utilization*);
  Return (*DeviceGetMemoryInfo)(Device, Memory*);
  Return (*DeviceGetTemperature)(Device, unsigned int, unsigned int*);
  Return (*DeviceGetPowerUsage)(Device, unsigned int*);
  Return (*DeviceGetEnforcedPowerLimit)(Device, unsigned int*);
  Return (*DeviceGetTotalEnergyConsumption)(Device, unsigned long long*);
  Return (*DeviceGetRetiredPages)(Device, unsigned int, unsigned int*, unsigned long long*);
  Return (*DeviceGetRetiredPagesPendingStatus)(Device, unsigned int*);
  Return (*DeviceGetRemappedRows)(Device, unsigned int*, unsigned int*, unsigned int*, unsigned int*);
  Return (*DeviceGetClockInfo)(Device, unsigned int, unsigned int*);
  Return (*DeviceGetApplicationsClock)(Device, unsigned int, unsigned int*);
  Return (*DeviceGetMaxClockInfo)(Device, unsigned int, unsigned int*);
  Return (*DeviceGetCurrentClocksThrottleReasons)(Device, unsigned long long*);
  Return (*DeviceGetCurrPcieLinkGeneration)(Device, unsigned int*);
  Return (*DeviceGetCurrPcieLinkWidth)(Device, unsigned int*);
  Return (*DeviceGetMaxPcieLinkGeneration)(Device, unsigned int*);
  Return (*DeviceGetMaxPcieLinkWidth)(Device, unsigned int*);
  Return (*DeviceGetPcieReplayCounter)(Device, unsigned int*);
  Return (*DeviceGetPcieThroughput)(Device, unsigned int, unsigned int*);
  Return (*DeviceGetNvLinkState)(Device, unsigned int, unsigned int*);
  Return (*DeviceGetNvLinkErrorCounter)(Device, unsigned int, unsigned int, unsigned long long*);
  Return (*DeviceGetEccMode)(Device, unsigned int*, unsigned int*);
  Return (*DeviceGetTotalEccErrors)(Device, unsigned int, unsigned int, unsigned long long*);
  Return (*DeviceGetFanSpeed)(Device, unsigned int*);
  Return (*DeviceGetPerformanceState)(Device, unsigned int*);
  Return (*DeviceGetPersistenceMode)(Device, unsigned int*);
  Return (*DeviceGetFieldValues)(Device, int, FieldValue*);
  Return (*DeviceGetComputeRunningProcesses)(Device, unsigned int*, ProcessInfo*);
  Return (*DeviceGetMigMode)(Device, unsigned int*, unsigned int*);
  Return (*DeviceGetMaxMigDeviceCount)(Device, unsigned int*);
  Return (*DeviceGetMigDeviceHandleByIndex)(Device, unsigned int, Device*);
  Return (*EventSetCreate)(EventSet*);
  Return (*DeviceRegisterEvents)(Device, unsigned long long, EventSet);
  Return (*EventSetWait)(EventSet, EventData*, unsigned int);
  Return (*EventSetFree)(EventSet);
  // GPM (drivers from R525 on; absent before).
  Return (*GpmQueryDeviceSupport)(Device, GpmSupport*);
  Return (*GpmSampleAlloc)(GpmSample*);
  Return (*GpmSampleFree)(GpmSample);
  Return (*GpmSampleGet)(Device, GpmSample);
  Return (*GpmMetricsGet)(GpmMetricsGet*);
};

}  // namespace gcm::nvml
