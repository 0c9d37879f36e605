// Reads one GPU through NVML into a GpuSample, one guarded call at a time (each marked on the CallWatch so a hung
// call is detected by the waiting side, and counted in GpuSample::nvml_calls).
#pragma once

#include "gpu/device_worker.h"
#include "gpu/gpu_backend.h"
#include "gpu/gpm_sampler.h"
#include "gpu/gpu_sample.h"
#include "gpu/nvml_caller.h"
#include "gpu/nvml_library.h"

namespace gcm {

// `gpm`: the GPU's GPM state, kept between samples (extended scope only); null leaves the gpm_* fields empty.
void sample_device(const NvmlLibrary& lib, nvml::Device device, CallWatch& watch, const SampleScope& scope,
                   GpuSample& out, GpmState* gpm = nullptr);

}  // namespace gcm
