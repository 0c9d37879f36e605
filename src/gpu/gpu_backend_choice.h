// Which GPU library a command samples through: `gcm --backend nvml|amdsmi|auto` (the group option where GCM's
// accelerator HAL puts it), else the command's own default (nvml_monitor: nvml, rocm_monitor: amdsmi). "auto" takes
// the first library that loads and finds GPUs, NVML first; a host where neither finds one gets the one that loaded,
// and a host where neither loads one error naming both reasons.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "gpu/gpu_sampler.h"

namespace gcm {

struct GpuBackendChoice {
  std::string backend = "nvml";                  // nvml, amdsmi or auto
  std::optional<std::string> nvml_library;       // --nvml-library (else $GCM_NVML_LIBRARY, else the search)
  std::optional<std::string> amdsmi_library;     // --amdsmi-library (else $GCM_AMDSMI_LIBRARY, else the search)
  std::chrono::milliseconds call_timeout{5000};  // the library's init and every call
};

// The names --backend takes.
const std::vector<std::string>& gpu_backend_names();

// Opens the chosen library and counts its GPUs. Throws the library's UnavailableError (NvmlUnavailable,
// AmdsmiUnavailable; for "auto" with neither usable, an UnavailableError naming both).
std::unique_ptr<GpuSampler> open_gpu_sampler(const GpuBackendChoice& choice, GpuSamplerOptions opts);

}  // namespace gcm
