#include "gpu/amdsmi_library.h"

#include <dlfcn.h>

#include <cstdlib>

#include <fmt/format.h>

#include "gpu/library_loading.h"

namespace gcm {
namespace {

using AmdsmiBinder = EntryPointBinder<amdsmi::Status, amdsmi::STATUS_GCM_FUNCTION_NOT_FOUND>;

// The four without which no GPU can be found; every other one reads as "not supported" when missing.
void bind_amdsmi(AmdsmiBinder& b, amdsmi::Api& a) {
  b.bind(a.Init, {"amdsmi_init"}, true);
  b.bind(a.ShutDown, {"amdsmi_shut_down"}, true);
  b.bind(a.GetSocketHandles, {"amdsmi_get_socket_handles"}, true);
  b.bind(a.GetProcessorHandles, {"amdsmi_get_processor_handles"}, true);
  b.bind(a.StatusCodeToString, {"amdsmi_status_code_to_string"}, false);
  b.bind(a.GetGpuDeviceUuid, {"amdsmi_get_gpu_device_uuid"}, false);
  b.bind(a.GetGpuDeviceBdf, {"amdsmi_get_gpu_device_bdf"}, false);
  b.bind(a.GetGpuActivity, {"amdsmi_get_gpu_activity"}, false);
  b.bind(a.GetPowerInfo, {"amdsmi_get_power_info"}, false);
  b.bind(a.GetTempMetric, {"amdsmi_get_temp_metric"}, false);
  b.bind(a.GetEnergyCount, {"amdsmi_get_energy_count"}, false);
  b.bind(a.GetViolationStatus, {"amdsmi_get_violation_status"}, false);
  b.bind(a.GetGpuTotalEccCount, {"amdsmi_get_gpu_total_ecc_count"}, false);
  b.bind(a.GetGpuBadPageInfo, {"amdsmi_get_gpu_bad_page_info"}, false);
  b.bind(a.GpuXgmiErrorStatus, {"amdsmi_gpu_xgmi_error_status"}, false);
  b.bind(a.GetGpuProcessList, {"amdsmi_get_gpu_process_list"}, false);
  b.bind(a.GetGpuComputePartition, {"amdsmi_get_gpu_compute_partition"}, false);
  b.bind(a.GetGpuMemoryPartition, {"amdsmi_get_gpu_memory_partition"}, false);
  b.bind(a.GetGpuMemoryTotal, {"amdsmi_get_gpu_memory_total"}, false);
  b.bind(a.GetGpuMemoryUsage, {"amdsmi_get_gpu_memory_usage"}, false);
  b.bind(a.GetClockInfo, {"amdsmi_get_clock_info"}, false);
  b.bind(a.GetPcieInfo, {"amdsmi_get_pcie_info"}, false);
  b.bind(a.InitGpuEventNotification, {"amdsmi_init_gpu_event_notification"}, false);
  b.bind(a.SetGpuEventNotificationMask, {"amdsmi_set_gpu_event_notification_mask"}, false);
  b.bind(a.GetGpuEventNotification, {"amdsmi_get_gpu_event_notification"}, false);
  b.bind(a.StopGpuEventNotification, {"amdsmi_stop_gpu_event_notification"}, false);
  b.bind(a.GetGpuAsicInfo, {"amdsmi_get_gpu_asic_info"}, false);
  b.bind(a.GetGpuDriverInfo, {"amdsmi_get_gpu_driver_info"}, false);
}

}  // namespace

std::string amdsmi_library_path(const std::optional<std::string>& explicit_path) {
  if (explicit_path && !explicit_path->empty()) return *explicit_path;
  if (const char* env = std::getenv("GCM_AMDSMI_LIBRARY"); env && *env) return env;
  return "libamd_smi.so";
}

std::shared_ptr<AmdsmiLibrary> AmdsmiLibrary::open(const std::string& path, std::chrono::milliseconds init_timeout) {
  std::shared_ptr<AmdsmiLibrary> lib(new AmdsmiLibrary());
  lib->path_ = path;
  lib->handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle_) {
    const char* err = ::dlerror();
    throw AmdsmiUnavailable(
        fmt::format("cannot load AMD's management library '{}': {} (is ROCm installed? set --amdsmi-library or "
                    "GCM_AMDSMI_LIBRARY to the path of libamd_smi.so)",
                    path, err ? err : "unknown error"));
  }
  AmdsmiBinder b{lib->handle_, lib->missing_, {}};
  bind_amdsmi(b, lib->api_);
  if (!b.missing_required.empty())
    throw AmdsmiUnavailable(
        fmt::format("'{}' is not a usable amdsmi library: it lacks {}", path, fmt::join(b.missing_required, ", ")));
  bool timed_out = false;
  auto init = lib->api_.Init;
  amdsmi::Status rc = call_with_timeout<amdsmi::Status>([init] { return init(amdsmi::kInitAmdGpus); }, init_timeout,
                                                        &timed_out, amdsmi::STATUS_UNKNOWN_ERROR);
  if (timed_out)
    throw AmdsmiUnavailable(fmt::format("amdsmi_init in '{}' did not return within {} ms (the amdgpu driver may be "
                                        "wedged)",
                                        path, init_timeout.count()),
                            amdsmi::STATUS_TIMEOUT);
  if (rc != amdsmi::STATUS_SUCCESS) {
    const char* name = amdsmi::status_name(rc);
    throw AmdsmiUnavailable(fmt::format("amdsmi_init in '{}' failed: {} (AMDSMI_STATUS_{})", path,
                                        lib->error_string(rc), name ? name : std::to_string(rc)),
                            rc);
  }
  lib->initialised_ = true;
  return lib;
}

AmdsmiLibrary::~AmdsmiLibrary() {
  // The library stays mapped: a worker thread stuck in a hung call may still be executing its code. The shutdown is
  // bounded: a driver that wedged after the last call must not hang the process on its way out.
  bool timed_out = false;
  if (initialised_ && api_.ShutDown)
    call_with_timeout<amdsmi::Status>(api_.ShutDown, std::chrono::seconds(5), &timed_out, amdsmi::STATUS_UNKNOWN_ERROR);
}

std::string AmdsmiLibrary::error_string(amdsmi::Status s) const {
  if (s == amdsmi::STATUS_GCM_FUNCTION_NOT_FOUND) return "the library does not export this function";
  const char* text = nullptr;
  if (api_.StatusCodeToString && api_.StatusCodeToString(s, &text) == amdsmi::STATUS_SUCCESS && text && *text)
    return text;
  if (const char* name = amdsmi::status_name(s)) return std::string("AMDSMI_STATUS_") + name;
  return fmt::format("amdsmi status {}", s);
}

}  // namespace gcm
