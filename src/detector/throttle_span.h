// The clock-event reason time over the last few windows of one GPU. Judging a span of windows rather than one
// window keeps a power-brake blip shorter than a window from flagging, however it straddles a window boundary.
#pragma once

#include <array>

#include "detector/gpu_window.h"

namespace gcm::detector {

enum class Throttle : int { HwSlowdown = 0, HwThermal = 1, PowerBrake = 2, Count = 3 };

class ThrottleSpan {
 public:
  static constexpr int kMaxSpan = 8;
  // Adds a window; the span keeps the latest `span` windows (1..kMaxSpan).
  void push(const GpuWindow& w, int span);
  // Fraction of the span's time with the reason set (0 when the span is empty).
  double fraction(Throttle t) const;
  void clear() { size_ = 0; }

 private:
  struct Entry {
    double seconds = 0;
    std::array<double, 3> throttled{};  // seconds with each reason set
  };
  std::array<Entry, kMaxSpan> ring_{};
  int next_ = 0, size_ = 0, span_ = 1;
};

}  // namespace gcm::detector
