#include "detector/verdict.h"

namespace gcm::detector {

const char* to_string(HealthState s) {
  switch (s) {
    case HealthState::Ok:
      return "ok";
    case HealthState::Suspect:
      return "suspect";
    case HealthState::Degraded:
      return "degraded";
    case HealthState::Failed:
      return "failed";
  }
  return "?";
}

const char* signal_name(Signal s) {
  switch (s) {
    case Signal::SmClock:
      return "sm_clock";
    case Signal::Power:
      return "power";
    case Signal::GpuUtil:
      return "gpu_util";
    case Signal::Count:
      break;
  }
  return "?";
}

}  // namespace gcm::detector
