#include "detector/persistence.h"

#include <algorithm>
#include <bit>

namespace gcm::detector {

ReasonSet Persistence::degraded_at_once() {
  ReasonSet s;
  s.add(Reason::RowRemapPending);
  s.add(Reason::NvlinkDown);
  // The catalogue calls a non-fatal AER error critical: the next job must not start on the GPU (a fatal one fails).
  s.add(Reason::PcieAer);
  return s;
}

int Persistence::flagged_windows(const DetectorConfig& c) const {
  int n = std::clamp(c.degrade_n, 1, 32);
  uint32_t mask = n == 32 ? ~0u : ((1u << n) - 1);
  return std::popcount(ring_ & mask);
}

HealthState Persistence::update(const Input& in, const DetectorConfig& c) {
  for (int i = 0; i < kReasonCount; ++i) {
    auto r = static_cast<Reason>(i);
    int& streak = streak_[static_cast<size_t>(i)];
    if (in.flagged.has(r)) {
      active_.add(r);
      streak = 0;
      if (in.fatal.has(r)) fatal_.add(r);
    } else if (!in.held.has(r) && active_.has(r)) {
      ++streak;
      int limit = fatal_.has(r) ? c.failed_clear_windows : c.clear_windows;
      if (streak >= limit) {
        active_.remove(r);
        fatal_.remove(r);
      }
    }
  }
  ring_ = (ring_ << 1) | (in.flagged.empty() ? 0u : 1u);

  HealthState next = HealthState::Ok;
  if (!fatal_.empty()) {
    next = HealthState::Failed;
  } else if (!active_.empty()) {
    bool persistent = flagged_windows(c) >= c.degrade_k;
    bool stays = state_ >= HealthState::Degraded;  // from degraded (or failed with soft reasons left) until clear
    next = (persistent || stays || active_.intersects(degraded_at_once())) ? HealthState::Degraded
                                                                           : HealthState::Suspect;
  }
  state_ = next;
  return state_;
}

void Persistence::forgive(ReasonSet reasons) {
  for (int i = 0; i < kReasonCount; ++i) {
    auto r = static_cast<Reason>(i);
    if (!reasons.has(r)) continue;
    active_.remove(r);
    fatal_.remove(r);
    streak_[static_cast<size_t>(i)] = 0;
  }
  if (active_.empty()) {
    state_ = HealthState::Ok;
    ring_ = 0;
  } else if (fatal_.empty() && state_ == HealthState::Failed) {
    state_ = HealthState::Degraded;
  }
}

}  // namespace gcm::detector
