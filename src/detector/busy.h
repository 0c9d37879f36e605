// Whether a GPU worked through a whole window. Idle GPUs lower their clocks and PCIe links on purpose, and the
// window where a job starts or ends holds a few idle seconds that differ from GPU to GPU, so the peer comparison
// and the PCIe rule judge only busy windows.
#pragma once

#include "detector/config.h"
#include "detector/gpu_window.h"

namespace gcm::detector {

bool is_busy(const GpuWindow& w, const DetectorConfig& c);

}  // namespace gcm::detector
