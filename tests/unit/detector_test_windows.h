// Hand-made windows for the detector's unit tests: a busy GPU of job "42" at 93 % of its max SM clock.
#pragma once

#include <vector>

#include "detector/gpu_window.h"

namespace gcm::detector::test {

inline FieldStats flat(double v) { return FieldStats{v, v, v, v, 30}; }

inline GpuWindow busy_window(unsigned gpu, double clock_ratio = 0.93, double power_w = 600, double util = 98) {
  GpuWindow w;
  w.gpu = gpu;
  w.uuid = "GPU-" + std::to_string(gpu);
  w.seconds = 30;
  w.samples = 30;
  w.job_id = "42";
  w.sm_clock_mhz = flat(1980 * clock_ratio);
  w.max_sm_clock_mhz = flat(1980);
  w.power_watts = flat(power_w);
  w.power_limit_watts = flat(700);
  w.gpu_util_percent = flat(util);
  w.pcie_gen = w.pcie_gen_max = 5;
  w.pcie_width = w.pcie_width_max = 16;
  return w;
}

inline std::vector<GpuWindow> busy_node(int gpus = 8) {
  std::vector<GpuWindow> ws;
  for (int g = 0; g < gpus; ++g) ws.push_back(busy_window(static_cast<unsigned>(g)));
  return ws;
}

}  // namespace gcm::detector::test
