// Reads one AMD GPU through amdsmi into a GpuSample (the same fields NVML fills, where AMD has them), one watched
// call at a time (amdsmi_caller.h). A value the GPU or the library does not report, or reports with amdsmi's "not
// supported" sentinel (all bits set), stays empty: the record shows null, never 0.
#pragma once

#include "gpu/amdsmi_library.h"
#include "gpu/device_worker.h"
#include "gpu/gpu_backend.h"
#include "gpu/gpu_sample.h"

namespace gcm {

void sample_amd_gpu(const AmdsmiLibrary& lib, amdsmi::ProcessorHandle gpu, CallWatch& watch, const SampleScope& scope,
                    GpuSample& out);

// The throttling indicators of amdsmi_get_violation_status as NVML clock event reason bits (sample_device.h's
// names): PPT power -> sw_power_cap, socket and HBM thermal -> sw_thermal_slowdown, VR thermal ->
// hw_thermal_slowdown, PROCHOT -> hw_slowdown. nullopt when the GPU supports none of them.
std::optional<uint64_t> amd_violation_reasons(const amdsmi::ViolationStatus& v);

// The PCIe generation of a link speed in MT/s (2500 -> 1, ..., 64000 -> 6); nullopt for an unknown speed.
std::optional<int64_t> pcie_generation_of_speed(uint64_t mts);

}  // namespace gcm
