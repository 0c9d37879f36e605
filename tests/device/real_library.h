// What the real-library tests of NVIDIA (nvml_real_test.cc) and AMD (amdsmi_real_test.cc) share: the library named
// by an environment variable, optional values as JSON for the dumps, and the cost of a sample of every GPU.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdlib>
#include <optional>

#include <nlohmann/json.hpp>

#include "gpu/gpu_sampler.h"

namespace gcm::device_test {

// The library path in $var, or null when it is unset or empty (no such GPU here: the test skips).
inline const char* library_from_env(const char* var) {
  const char* p = std::getenv(var);
  return p && *p ? p : nullptr;
}

template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

struct SampleCost {
  double cpu_ms = 0, wall_ms = 0;  // per sample of every GPU
};

// `samples` samples of every GPU, timed in process CPU and wall time.
inline SampleCost time_samples(GpuSampler& sampler, int samples) {
  auto cpu_s = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  double c0 = cpu_s();
  auto w0 = std::chrono::steady_clock::now();
  for (int i = 0; i < samples; ++i) sampler.sample();
  SampleCost c;
  c.cpu_ms = (cpu_s() - c0) / samples * 1e3;
  c.wall_ms = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count() / samples * 1e3;
  return c;
}

}  // namespace gcm::device_test
