// check-nvidia-smi -c clock_policy's rule (GCM's ClockPolicy / evaluate_clock_policy): a GPU's applications clocks
// against the expected graphics and memory clocks; the larger absolute drift above --critical-delta-mhz is
// CRITICAL, above --warn-delta-mhz WARNING. Unlike clock_freq (a minimum), a clock set too high also counts: a
// fleet must run one clock policy for its jobs to be comparable.
#pragma once

#include <cstdint>

#include "health/exit_code.h"

namespace gcm::health {

struct ClockPolicy {
  int64_t expected_graphics_mhz = 1155;
  int64_t expected_memory_mhz = 1593;
  int64_t warn_delta_mhz = 30;
  int64_t critical_delta_mhz = 75;
};

struct ClockPolicyResult {
  bool compliant = true;  // severity OK
  ExitCode severity = ExitCode::OK;
  int64_t graphics_delta_mhz = 0;  // observed - expected
  int64_t memory_delta_mhz = 0;
};

ClockPolicyResult evaluate_clock_policy(int64_t graphics_mhz, int64_t memory_mhz, const ClockPolicy& policy);

}  // namespace gcm::health
