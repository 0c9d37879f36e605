// The SM clock a GPU is judged by among its peers. A window in which one of the GPU's hardware throttle reasons
// (HW_SLOWDOWN, HW_THERMAL_SLOWDOWN, HW_POWER_BRAKE_SLOWDOWN) was set is judged by its samples without one: a few
// seconds of power brake pull the window's mean down by several percent, and that slowdown is explained by the
// reason bit, which has its own rule (absolute_rules.h: set more than half of two windows). A GPU that is slow in
// its unthrottled samples too is a straggler all the same. A window with too few unthrottled samples is not
// judged by its clock at all (peer_slow is held): the throttle rule owns it.
#pragma once

#include "detector/config.h"
#include "detector/gpu_window.h"

namespace gcm::detector {

// Whether any sample of the window had a hardware throttle reason set.
bool had_hw_throttle(const GpuWindow& w);

struct JudgedClock {
  double ratio = 0;          // mean SM clock over the GPU's maximum; 0: not judged this window
  bool unthrottled = false;  // the mean is of the unthrottled samples only
  int samples = 0;           // how many samples the mean is of
};
JudgedClock judged_sm_clock(const GpuWindow& w, const DetectorConfig& c);

}  // namespace gcm::detector
