// Loads AMD's libamd_smi.so at run time and initialises it for GPUs, with a timeout on amdsmi_init, as
// nvml_library.h does for NVML: a host without the library, without the amdgpu driver, or with a wedged one gets one
// AmdsmiUnavailable error that says which, never a crash or a hang. librocm_smi64 is not used: it is in maintenance
// since ROCm 7, and amdsmi sees no GPUs when both are loaded in one process.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/usage_error.h"
#include "gpu/amdsmi_api.h"

namespace gcm {

// amdsmi cannot be used on this host. Commands map it to kExitUnavailable, as NvmlUnavailable.
struct AmdsmiUnavailable : UnavailableError {
  explicit AmdsmiUnavailable(const std::string& what, amdsmi::Status code = amdsmi::STATUS_FAIL_LOAD_MODULE)
      : UnavailableError("amdsmi", what), status(code) {}
  amdsmi::Status status;  // what amdsmi answered (FAIL_LOAD_MODULE when the library could not be used)
};

// Which library to load: the explicit path, else $GCM_AMDSMI_LIBRARY, else "libamd_smi.so" (the loader's search;
// ROCm installs it under /opt/rocm/lib, which ld.so.conf.d usually names).
std::string amdsmi_library_path(const std::optional<std::string>& explicit_path);

class AmdsmiLibrary {
 public:
  // dlopens `path`, resolves the table and runs amdsmi_init(AMDSMI_INIT_AMD_GPUS) on a helper thread, waiting at
  // most init_timeout. Throws AmdsmiUnavailable naming the path and the reason (the missing symbols, the status).
  static std::shared_ptr<AmdsmiLibrary> open(const std::string& path, std::chrono::milliseconds init_timeout);
  ~AmdsmiLibrary();
  AmdsmiLibrary(const AmdsmiLibrary&) = delete;
  AmdsmiLibrary& operator=(const AmdsmiLibrary&) = delete;

  const amdsmi::Api& api() const { return api_; }
  const std::string& path() const { return path_; }
  // amdsmi_status_code_to_string when the library has it, else the symbolic name, else the number.
  std::string error_string(amdsmi::Status s) const;
  // Entry points the library does not export (an older ROCm); they answer STATUS_GCM_FUNCTION_NOT_FOUND.
  const std::vector<std::string>& missing_symbols() const { return missing_; }

 private:
  AmdsmiLibrary() = default;
  void* handle_ = nullptr;
  amdsmi::Api api_{};
  std::string path_;
  std::vector<std::string> missing_;
  bool initialised_ = false;
};

}  // namespace gcm
