#include "detector/throttle_span.h"

#include <algorithm>

namespace gcm::detector {

void ThrottleSpan::push(const GpuWindow& w, int span) {
  span_ = std::clamp(span, 1, kMaxSpan);
  Entry& e = ring_[static_cast<size_t>(next_)];
  // A window without its length (a harness or agent bug) still counts, as one unit.
  e.seconds = w.seconds > 0 ? w.seconds : 1.0;
  e.throttled = {w.hw_slowdown_fraction * e.seconds, w.hw_thermal_fraction * e.seconds,
                 w.power_brake_fraction * e.seconds};
  next_ = (next_ + 1) % span_;
  size_ = std::min(size_ + 1, span_);
}

double ThrottleSpan::fraction(Throttle t) const {
  double total = 0, set = 0;
  for (int i = 0; i < size_; ++i) {
    total += ring_[static_cast<size_t>(i)].seconds;
    set += ring_[static_cast<size_t>(i)].throttled[static_cast<size_t>(t)];
  }
  return total > 0 ? set / total : 0;
}

}  // namespace gcm::detector
