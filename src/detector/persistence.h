// The per-GPU state machine: ok -> suspect after one flagged window, degraded once k of the last n windows were
// flagged (or at once for a pending row remap or an NVLink that is down), failed at once for hard faults (lost,
// double-bit ECC, row-remap failure, an XID whose action is a reset or worse, a fatal PCIe AER error). Each reason holds until it has been
// clean for clear_windows (failed_clear_windows for a hard fault); the state returns to ok when no reason holds, and
// a degraded GPU stays degraded until then, so a drain decision never flickers.
//
// A reason that cannot be judged in a window (peer_slow while the GPU is idle or between jobs, pcie_degraded while
// idle, anything while the GPU does not answer) is held: neither flagged nor clean. A GPU found slow in one job is
// thus still degraded when the job ends, which is when a drain takes effect.
#pragma once

#include <array>
#include <cstdint>

#include "detector/config.h"
#include "detector/reasons.h"
#include "detector/verdict.h"

namespace gcm::detector {

class Persistence {
 public:
  struct Input {
    ReasonSet flagged;  // flagged by this window
    ReasonSet held;     // could not be judged this window
    ReasonSet fatal;    // of `flagged`, those that fail the GPU at once
  };
  // Returns the new state.
  HealthState update(const Input& in, const DetectorConfig& c);

  HealthState state() const { return state_; }
  ReasonSet active() const { return active_; }
  int flagged_windows(const DetectorConfig& c) const;
  // Drops `reasons` at once (a confirmation check under load passed for reasons that idle windows cannot judge, so
  // would hold for ever on a drained node) and recomputes the state from what is left.
  void forgive(ReasonSet reasons);
  // Reasons that degrade at once: a pending row remap (it needs a reset anyway) and an NVLink that is down (the
  // GPU's bandwidth is gone until the link is back; no number of windows makes it less true).
  static ReasonSet degraded_at_once();
  // Clean windows seen by a reason since it last flagged (0 when flagged now).
  int clean_streak(Reason r) const { return streak_[static_cast<size_t>(r)]; }

 private:
  HealthState state_ = HealthState::Ok;
  ReasonSet active_, fatal_;
  std::array<int, kReasonCount> streak_{};
  uint32_t ring_ = 0;  // bit i: the window i rounds ago was flagged
};

}  // namespace gcm::detector
