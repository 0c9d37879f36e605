// Runs the NVML calls of one GPU's sample: marks each on the CallWatch (so a hung call is seen by the waiting
// side), counts it in the sample (GpuSample::nvml_calls, the agent's "NVML calls per GPU per sample") and turns its
// return code into "value or null".
#pragma once

#include <fmt/format.h>

#include <optional>
#include <stdexcept>

#include "gpu/device_worker.h"
#include "gpu/gpu_sample.h"
#include "gpu/nvml_library.h"

namespace gcm {

// The GPU answered NVML_ERROR_GPU_IS_LOST: it has fallen off the bus; no value of this sample may be used.
struct GpuLost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Caller {
 public:
  Caller(const NvmlLibrary& lib, CallWatch& watch, GpuSample& out) : lib_(lib), watch_(watch), out_(out) {}

  // True when `fn` is present and returned SUCCESS. NOT_SUPPORTED (and its kin) is a plain "no value"; other
  // errors are remembered in the sample; GPU_IS_LOST aborts the sample.
  template <typename Fn, typename... Args>
  bool call(const char* name, Fn* fn, Args... args) {
    return check(name, call_raw_unchecked(name, fn, args...));
  }

  // Like call() but every return code comes back (size queries count INSUFFICIENT_SIZE as an answer); only
  // GPU_IS_LOST throws.
  template <typename Fn, typename... Args>
  nvml::Return call_raw(const char* name, Fn* fn, Args... args) {
    nvml::Return rc = call_raw_unchecked(name, fn, args...);
    if (rc == nvml::ERROR_GPU_IS_LOST) throw GpuLost(fmt::format("{}: GPU is lost", name));
    return rc;
  }

  // An `unsigned int` out-parameter read as a value (the out-parameter goes last, as in every NVML getter).
  template <typename Fn, typename... Args>
  std::optional<int64_t> uint_value(const char* name, Fn* fn, Args... args) {
    unsigned v = 0;
    if (call(name, fn, args..., &v)) return static_cast<int64_t>(v);
    return std::nullopt;
  }

  bool check(const char* name, nvml::Return rc) {
    switch (rc) {
      case nvml::SUCCESS:
        return true;
      case nvml::ERROR_GPU_IS_LOST:
        throw GpuLost(fmt::format("{}: GPU is lost", name));
      case nvml::ERROR_NOT_SUPPORTED:
      case nvml::ERROR_FUNCTION_NOT_FOUND:
      case nvml::ERROR_NOT_FOUND:
      case nvml::ERROR_NO_DATA:
        return false;
      default:
        out_.errors.push_back(fmt::format("{}: {}", name, lib_.error_string(rc)));
        return false;
    }
  }

 private:
  template <typename Fn, typename... Args>
  nvml::Return call_raw_unchecked(const char* name, Fn* fn, Args... args) {
    if (!fn) return nvml::ERROR_FUNCTION_NOT_FOUND;
    watch_.begin(name);
    nvml::Return rc = fn(args...);
    watch_.end();
    // An entry point the driver lacks answers FUNCTION_NOT_FOUND from the loader's stub: no call into NVML.
    if (rc != nvml::ERROR_FUNCTION_NOT_FOUND) ++out_.nvml_calls;
    return rc;
  }

  const NvmlLibrary& lib_;
  CallWatch& watch_;
  GpuSample& out_;
};

}  // namespace gcm
