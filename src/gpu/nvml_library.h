// Loads libnvidia-ml.so.1 at run time and initialises it, with a timeout on nvmlInit: a host without the library,
// without a driver, or with a wedged driver gets one NvmlUnavailable error that says which, never a crash or a hang.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/usage_error.h"
#include "gpu/nvml_api.h"

namespace gcm {

// NVML cannot be used on this host (library missing, symbols missing, driver not loaded, init hung). Commands map
// it to kExitNvmlUnavailable.
struct NvmlUnavailable : UnavailableError {
  explicit NvmlUnavailable(const std::string& what, nvml::Return code = nvml::ERROR_LIBRARY_NOT_FOUND)
      : UnavailableError("NVML", what), nvml_return(code) {}
  nvml::Return nvml_return;  // what NVML answered (LIBRARY_NOT_FOUND when the library could not be used)
};
// The exit code of a command that needs NVML on a host where it is unavailable (EX_UNAVAILABLE from sysexits.h).
constexpr int kExitNvmlUnavailable = kExitUnavailable;

// Which library to load: the explicit path, else $GCM_NVML_LIBRARY, else "libnvidia-ml.so.1" (the loader's search).
std::string nvml_library_path(const std::optional<std::string>& explicit_path);

class NvmlLibrary {
 public:
  // dlopens `path`, resolves the table and runs nvmlInit_v2 on a helper thread, waiting at most init_timeout.
  // Throws NvmlUnavailable naming the path and the reason.
  static std::shared_ptr<NvmlLibrary> open(const std::string& path, std::chrono::milliseconds init_timeout);
  // The same, but while an instance opened by open_shared for `path` is alive anywhere in the process, that one:
  // checks running on threads of one process (the suite's shared child) load and initialise NVML once.
  static std::shared_ptr<NvmlLibrary> open_shared(const std::string& path, std::chrono::milliseconds init_timeout);
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const nvml::Api& api() const { return api_; }
  const std::string& path() const { return path_; }
  // nvmlErrorString when the library has it, else the symbolic name, else the number.
  std::string error_string(nvml::Return r) const;
  // Entry points the library does not export (an older driver); they read as NOT_SUPPORTED.
  const std::vector<std::string>& missing_symbols() const { return missing_; }

 private:
  NvmlLibrary() = default;
  void* handle_ = nullptr;
  nvml::Api api_{};
  std::string path_;
  std::vector<std::string> missing_;
  bool initialised_ = false;
};

}  // namespace gcm
