#include "gpu/nvml_library.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "gpu/library_loading.h"

namespace gcm {
namespace {

using NvmlBinder = EntryPointBinder<nvml::Return, nvml::ERROR_FUNCTION_NOT_FOUND>;

void bind_nvml(NvmlBinder& b, nvml::Api& a) {
  b.bind(a.Init, {"nvmlInit_v2"}, true);
  b.bind(a.Shutdown, {"nvmlShutdown"}, true);
  b.bind(a.ErrorString, {"nvmlErrorString"}, false);
  b.bind(a.SystemGetDriverVersion, {"nvmlSystemGetDriverVersion"}, false);
  b.bind(a.DeviceGetCount, {"nvmlDeviceGetCount_v2"}, true);
  b.bind(a.DeviceGetHandleByIndex, {"nvmlDeviceGetHandleByIndex_v2"}, true);
  b.bind(a.DeviceGetName, {"nvmlDeviceGetName"}, false);
  b.bind(a.DeviceGetUUID, {"nvmlDeviceGetUUID"}, false);
  b.bind(a.DeviceGetSerial, {"nvmlDeviceGetSerial"}, false);
  b.bind(a.DeviceGetPciInfo, {"nvmlDeviceGetPciInfo_v3"}, false);
  b.bind(a.DeviceGetMinorNumber, {"nvmlDeviceGetMinorNumber"}, false);
  b.bind(a.DeviceGetVbiosVersion, {"nvmlDeviceGetVbiosVersion"}, false);
  b.bind(a.DeviceGetUtilizationRates, {"nvmlDeviceGetUtilizationRates"}, false);
  b.bind(a.DeviceGetMemoryInfo, {"nvmlDeviceGetMemoryInfo"}, false);
  b.bind(a.DeviceGetTemperature, {"nvmlDeviceGetTemperature"}, false);
  b.bind(a.DeviceGetPowerUsage, {"nvmlDeviceGetPowerUsage"}, false);
  b.bind(a.DeviceGetEnforcedPowerLimit, {"nvmlDeviceGetEnforcedPowerLimit"}, false);
  b.bind(a.DeviceGetTotalEnergyConsumption, {"nvmlDeviceGetTotalEnergyConsumption"}, false);
  b.bind(a.DeviceGetRetiredPages, {"nvmlDeviceGetRetiredPages"}, false);
  b.bind(a.DeviceGetRetiredPagesPendingStatus, {"nvmlDeviceGetRetiredPagesPendingStatus"}, false);
  b.bind(a.DeviceGetRemappedRows, {"nvmlDeviceGetRemappedRows"}, false);
  b.bind(a.DeviceGetClockInfo, {"nvmlDeviceGetClockInfo"}, false);
  b.bind(a.DeviceGetApplicationsClock, {"nvmlDeviceGetApplicationsClock"}, false);
  b.bind(a.DeviceGetMaxClockInfo, {"nvmlDeviceGetMaxClockInfo"}, false);
  // Renamed "clocks event reasons" in newer drivers; both names take the same arguments and bits.
  b.bind(a.DeviceGetCurrentClocksThrottleReasons,
         {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}, false);
  b.bind(a.DeviceGetCurrPcieLinkGeneration, {"nvmlDeviceGetCurrPcieLinkGeneration"}, false);
  b.bind(a.DeviceGetCurrPcieLinkWidth, {"nvmlDeviceGetCurrPcieLinkWidth"}, false);
  b.bind(a.DeviceGetMaxPcieLinkGeneration, {"nvmlDeviceGetMaxPcieLinkGeneration"}, false);
  b.bind(a.DeviceGetMaxPcieLinkWidth, {"nvmlDeviceGetMaxPcieLinkWidth"}, false);
  b.bind(a.DeviceGetPcieReplayCounter, {"nvmlDeviceGetPcieReplayCounter"}, false);
  b.bind(a.DeviceGetPcieThroughput, {"nvmlDeviceGetPcieThroughput"}, false);
  b.bind(a.DeviceGetNvLinkState, {"nvmlDeviceGetNvLinkState"}, false);
  b.bind(a.DeviceGetNvLinkErrorCounter, {"nvmlDeviceGetNvLinkErrorCounter"}, false);
  b.bind(a.DeviceGetEccMode, {"nvmlDeviceGetEccMode"}, false);
  b.bind(a.DeviceGetTotalEccErrors, {"nvmlDeviceGetTotalEccErrors"}, false);
  b.bind(a.DeviceGetFanSpeed, {"nvmlDeviceGetFanSpeed"}, false);
  b.bind(a.DeviceGetPerformanceState, {"nvmlDeviceGetPerformanceState"}, false);
  b.bind(a.DeviceGetPersistenceMode, {"nvmlDeviceGetPersistenceMode"}, false);
  b.bind(a.DeviceGetFieldValues, {"nvmlDeviceGetFieldValues"}, false);
  // _v2 (drivers R470-R495) takes the same 24-byte nvmlProcessInfo_t as _v3.
  b.bind(a.DeviceGetComputeRunningProcesses,
         {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"}, false);
  b.bind(a.DeviceGetMigMode, {"nvmlDeviceGetMigMode"}, false);
  b.bind(a.DeviceGetMaxMigDeviceCount, {"nvmlDeviceGetMaxMigDeviceCount"}, false);
  b.bind(a.DeviceGetMigDeviceHandleByIndex, {"nvmlDeviceGetMigDeviceHandleByIndex"}, false);
  b.bind(a.EventSetCreate, {"nvmlEventSetCreate"}, false);
  b.bind(a.DeviceRegisterEvents, {"nvmlDeviceRegisterEvents"}, false);
  b.bind(a.EventSetWait, {"nvmlEventSetWait_v2"}, false);
  b.bind(a.EventSetFree, {"nvmlEventSetFree"}, false);
  b.bind(a.GpmQueryDeviceSupport, {"nvmlGpmQueryDeviceSupport"}, false);
  b.bind(a.GpmSampleAlloc, {"nvmlGpmSampleAlloc"}, false);
  b.bind(a.GpmSampleFree, {"nvmlGpmSampleFree"}, false);
  b.bind(a.GpmSampleGet, {"nvmlGpmSampleGet"}, false);
  b.bind(a.GpmMetricsGet, {"nvmlGpmMetricsGet"}, false);
}

// nvmlInit (or nvmlShutdown) under a timeout (library_loading.h).
nvml::Return nvml_call_with_timeout(nvml::Return (*fn)(), std::chrono::milliseconds timeout, bool* timed_out) {
  return call_with_timeout<nvml::Return>(fn, timeout, timed_out, nvml::ERROR_UNKNOWN);
}

}  // namespace

std::string nvml_library_path(const std::optional<std::string>& explicit_path) {
  if (explicit_path && !explicit_path->empty()) return *explicit_path;
  if (const char* env = std::getenv("GCM_NVML_LIBRARY"); env && *env) return env;
  return "libnvidia-ml.so.1";
}

std::shared_ptr<NvmlLibrary> NvmlLibrary::open(const std::string& path, std::chrono::milliseconds init_timeout) {
  std::shared_ptr<NvmlLibrary> lib(new NvmlLibrary());
  lib->path_ = path;
  lib->handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle_) {
    const char* err = ::dlerror();
    throw NvmlUnavailable(
        fmt::format("cannot load the NVIDIA management library '{}': {} (is the NVIDIA driver "
                    "installed? set --nvml-library or GCM_NVML_LIBRARY to its path)",
                    path, err ? err : "unknown error"));
  }
  NvmlBinder b{lib->handle_, lib->missing_, {}};
  bind_nvml(b, lib->api_);
  if (!b.missing_required.empty())
    throw NvmlUnavailable(
        fmt::format("'{}' is not a usable NVML library: it lacks {}", path, fmt::join(b.missing_required, ", ")));
  bool timed_out = false;
  nvml::Return rc = nvml_call_with_timeout(lib->api_.Init, init_timeout, &timed_out);
  if (timed_out)
    throw NvmlUnavailable(fmt::format("nvmlInit in '{}' did not return within {} ms (the driver may be wedged)", path,
                                      init_timeout.count()),
                          nvml::ERROR_TIMEOUT);
  if (rc != nvml::SUCCESS)
    throw NvmlUnavailable(
        fmt::format("nvmlInit in '{}' failed: {} ({})", path, lib->error_string(rc), nvml::return_code_name(rc)), rc);
  lib->initialised_ = true;
  return lib;
}

std::shared_ptr<NvmlLibrary> NvmlLibrary::open_shared(const std::string& path, std::chrono::milliseconds init_timeout) {
  static std::mutex m;
  static std::map<std::string, std::weak_ptr<NvmlLibrary>> live;
  // Held while opening: a second caller waits for the first one's nvmlInit (bounded by its timeout) and then
  // shares its result, or opens for itself if it failed.
  std::lock_guard<std::mutex> lk(m);
  if (auto lib = live[path].lock()) return lib;
  auto lib = open(path, init_timeout);
  live[path] = lib;
  return lib;
}

NvmlLibrary::~NvmlLibrary() {
  // The library stays mapped: a worker thread stuck in a hung call may still be executing its code.
  // With a bound: a driver that wedged after the last call must not hang the process on its way out.
  bool timed_out = false;
  if (initialised_ && api_.Shutdown) nvml_call_with_timeout(api_.Shutdown, std::chrono::seconds(5), &timed_out);
}

std::string NvmlLibrary::error_string(nvml::Return r) const {
  if (api_.ErrorString) {
    if (const char* s = api_.ErrorString(r)) return s;
  }
  const char* name = nvml::return_code_name(r);
  return *name ? name : fmt::format("NVML error {}", r);
}

}  // namespace gcm
