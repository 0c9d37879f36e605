#include "detector/clock_signal.h"

namespace gcm::detector {

bool had_hw_throttle(const GpuWindow& w) {
  return w.hw_slowdown_fraction > 0 || w.hw_thermal_fraction > 0 || w.power_brake_fraction > 0;
}

JudgedClock judged_sm_clock(const GpuWindow& w, const DetectorConfig& c) {
  JudgedClock j;
  const std::optional<FieldStats>* clock = &w.sm_clock_mhz;
  if (had_hw_throttle(w)) {
    const auto& u = w.sm_clock_unthrottled_mhz;
    int all = w.sm_clock_mhz ? w.sm_clock_mhz->samples : 0;
    if (!u || u->samples == 0 || u->samples < c.min_unthrottled_fraction * all) return j;
    clock = &u;
    j.unthrottled = true;
  }
  if (!*clock || (*clock)->samples == 0) return j;
  const auto& max = w.max_sm_clock_mhz;
  j.ratio = max && max->samples > 0 && max->mean > 0 ? (*clock)->mean / max->mean : (*clock)->mean;
  j.samples = (*clock)->samples;
  return j;
}

}  // namespace gcm::detector
