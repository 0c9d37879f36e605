// Samples every GPU of the host in parallel, one worker thread per GPU, each library call under a timeout, through
// one GpuBackend (NVML or amdsmi). A GPU the library calls lost, or whose calls keep timing out, is reported as lost
// with no values: never stale ones.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "gpu/gpu_backend.h"
#include "gpu/gpu_sample.h"
#include "gpu/nvml_library.h"

namespace gcm {

class DeviceWorker;


struct DeviceResult {
  unsigned index = 0;
  GpuState state = GpuState::Ok;
  std::string detail;  // why the GPU is not Ok ("nvmlDeviceGetPowerUsage did not return within 2000 ms")
  GpuSample sample;    // measurements only when state is Ok; a GPU that is not Ok keeps its identity (uuid, minor)
  const char* vendor = nullptr;  // the backend's vendor ("nvidia", "amd")
};

struct GpuSamplerOptions {
  std::chrono::milliseconds call_timeout{5000};
  // A whole sample of one GPU may take at most this many call timeouts (a degraded GPU answering every call just
  // under the timeout must not hold the sample for minutes).
  int sample_budget_in_call_timeouts = 3;
  int lost_after_timeouts = 3;
  bool extended = true;
};

class GpuSampler {
 public:
  // Reads the device count (under the call timeout). Throws the backend's UnavailableError when it cannot.
  GpuSampler(std::shared_ptr<GpuBackend> backend, GpuSamplerOptions opts);
  // The NVML backend over `lib` (nvml_backend.h). Throws NvmlUnavailable.
  GpuSampler(std::shared_ptr<NvmlLibrary> lib, GpuSamplerOptions opts);
  ~GpuSampler();
  unsigned device_count() const { return static_cast<unsigned>(slots_.size()); }
  const std::string& driver_version() const { return driver_version_; }
  const GpuBackend& backend() const { return *backend_; }
  // One sample of every GPU, in index order. Never blocks longer than about one call timeout per stuck GPU.
  std::vector<DeviceResult> sample();

 private:
  struct Slot;
  std::shared_ptr<GpuBackend> backend_;
  GpuSamplerOptions opts_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::string driver_version_;
};

}  // namespace gcm
