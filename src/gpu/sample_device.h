// Reads one GPU through NVML into a GpuSample, one guarded call at a time (each marked on the CallWatch so a hung
// call is detected by the waiting side).
#pragma once

#include <stdexcept>

#include "gpu/device_worker.h"
#include "gpu/gpu_sample.h"
#include "gpu/nvml_library.h"

namespace gcm {

// The GPU answered NVML_ERROR_GPU_IS_LOST: it has fallen off the bus; no value of this sample may be used.
struct GpuLost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct SampleScope {
  bool static_info = true;  // name, UUID, serial, PCI, VBIOS (they do not change; the sampler asks once)
  bool extended = true;     // everything beyond the reference's DeviceMetrics
};

void sample_device(const NvmlLibrary& lib, nvml::Device device, CallWatch& watch, const SampleScope& scope,
                   GpuSample& out);

}  // namespace gcm
