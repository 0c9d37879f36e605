#include "detector/busy.h"

namespace gcm::detector {

bool is_busy(const GpuWindow& w, const DetectorConfig& c) {
  if (w.presence != Presence::Ok) return false;
  if (w.gpu_util_percent && w.gpu_util_percent->samples > 0) {
    return w.gpu_util_percent->mean >= c.busy_util_mean_percent && w.gpu_util_percent->min >= c.busy_util_min_percent;
  }
  // MIG and some products report no utilisation; GPM SM activity says the same thing.
  if (w.gpm_sm_activity && w.gpm_sm_activity->samples > 0) {
    return w.gpm_sm_activity->mean >= c.busy_sm_activity_mean && w.gpm_sm_activity->min >= c.busy_sm_activity_min;
  }
  return false;
}

}  // namespace gcm::detector
