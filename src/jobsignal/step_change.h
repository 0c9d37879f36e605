// The change-point test of a job's step time (docs/reference/job-signals.md, "Job slowdowns"): once per window it
// takes the job's step time on the node (the median over ranks of their median step wall time) and says when the
// job has become lastingly slower than it was: a rise of at least `min_rise` held over most of `confirm_windows`
// windows, never a single slow step, the 2 % jitter of steps, or a periodic pause of all ranks (evaluation,
// checkpointing). It also says when a slowed job is back to its old step time.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>

namespace gcm::jobsignal {

struct StepChangeConfig {
  double min_rise = 0.035;     // a confirmed rise is at least this (so that a true 5 % rise is caught through noise)
  int confirm_windows = 5;     // the test window: the rise must hold in its median (3 of 5 windows)
  int baseline_windows = 10;   // the reference: the median of this many windows before the test window
  int warmup_windows = 4;      // the job's first windows (start-up, compilation) are not part of the reference
  double recovered_within = 0.02;  // a slowed job is recovered when its step time is back within this of the old one
};

struct StepChange {
  enum class Kind { Slowdown, Recovery } kind = Kind::Slowdown;
  int64_t change_window = 0;  // the window (as counted by the caller) at which the step time moved
  double before = 0;          // the reference step time, seconds
  double after = 0;           // the step time over the test window, seconds
  double rise() const { return before > 0 ? after / before - 1 : 0; }
};

class StepChangeDetector {
 public:
  explicit StepChangeDetector(StepChangeConfig c = {}) : config_(c) {}

  // One window's step time (seconds), window numbers increasing; nullopt: the job reported no step this window (it
  // is skipped: a job that stops reporting has not become slower). Returns a change when one is confirmed.
  std::optional<StepChange> observe(int64_t window, std::optional<double> step_time);

  // The latest window's step time over the reference (1.0: as usual; 1.12: 12 % slower); nullopt before a
  // reference exists. Against the pre-slowdown reference while the job is slowed.
  std::optional<double> relative() const { return relative_; }
  bool slowed() const { return slowed_before_.has_value(); }

 private:
  struct Sample {
    int64_t window;
    double value;
  };
  StepChangeConfig config_;
  int seen_ = 0;
  std::deque<Sample> history_;  // at most baseline_windows + confirm_windows
  std::optional<double> slowed_before_;
  std::optional<double> relative_;
};

}  // namespace gcm::jobsignal
