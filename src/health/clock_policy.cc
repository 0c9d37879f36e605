#include "health/clock_policy.h"

#include <algorithm>
#include <cstdlib>

namespace gcm::health {

ClockPolicyResult evaluate_clock_policy(int64_t graphics_mhz, int64_t memory_mhz, const ClockPolicy& policy) {
  ClockPolicyResult r;
  r.graphics_delta_mhz = graphics_mhz - policy.expected_graphics_mhz;
  r.memory_delta_mhz = memory_mhz - policy.expected_memory_mhz;
  int64_t drift = std::max(std::llabs(r.graphics_delta_mhz), std::llabs(r.memory_delta_mhz));
  if (drift > policy.critical_delta_mhz)
    r.severity = ExitCode::CRITICAL;
  else if (drift > policy.warn_delta_mhz)
    r.severity = ExitCode::WARN;
  r.compliant = r.severity == ExitCode::OK;
  return r;
}

}  // namespace gcm::health
