#include "jobsignal/step_change.h"

#include <algorithm>
#include <vector>

#include "detector/peer_compare.h"

namespace gcm::jobsignal {

// Why a windowed median test and not Bayesian online change-point detection (FALCON's choice) or a CUSUM:
// - The agent already reduces each rank's steps to a median per window, so one slow step (a garbage collection, a
//   straggling batch) never reaches this test, and an evaluation pause shorter than half a window neither.
// - The test compares the median of the last `confirm_windows` windows with the median of the `baseline_windows`
//   before them. A median of 5 ignores any 2 windows: a periodic all-rank pause that fills a window or two moves
//   nothing, where a CUSUM's sum and BOCPD's run-length posterior both jump on one large outlier and need a
//   heavy-tailed likelihood model and a hazard rate tuned per job to stay quiet.
// - Its delay is bounded and known: a step rise is confirmed after ceil(confirm_windows / 2) windows, at most
//   confirm_windows when it is near the threshold; its false-alarm rate under noise is that of a median of 5 of
//   ~1 % jitter (the per-window median of 2 %-jittered steps) exceeding 4 %: nil in practice.
// - Its state is a ring of 15 doubles per job: nothing to budget with 16 jobs on a node.
std::optional<StepChange> StepChangeDetector::observe(int64_t window, std::optional<double> step_time) {
  if (!step_time || !(*step_time > 0)) return std::nullopt;
  if (++seen_ <= config_.warmup_windows) return std::nullopt;
  history_.push_back({window, *step_time});
  size_t keep = static_cast<size_t>(config_.baseline_windows + config_.confirm_windows);
  while (history_.size() > keep) history_.pop_front();

  size_t test_n = static_cast<size_t>(config_.confirm_windows);
  if (history_.size() < test_n) return std::nullopt;
  std::vector<double> test;
  for (size_t i = history_.size() - test_n; i < history_.size(); ++i) test.push_back(history_[i].value);
  double now = detector::median_in_place(test.data(), test.size());

  if (slowed_before_) {
    relative_ = history_.back().value / *slowed_before_;
    if (now <= *slowed_before_ * (1 + config_.recovered_within)) {
      StepChange c{StepChange::Kind::Recovery, history_[history_.size() - test_n].window, *slowed_before_, now};
      // The recovery's first window: the earliest of the test window back within reach of the old step time.
      for (size_t i = history_.size() - test_n; i < history_.size(); ++i)
        if (history_[i].value <= *slowed_before_ * (1 + config_.recovered_within)) {
          c.change_window = history_[i].window;
          break;
        }
      slowed_before_.reset();
      history_.erase(history_.begin(), history_.end() - static_cast<std::ptrdiff_t>(test_n));
      return c;
    }
  }

  // The reference: the windows before the test window, once there are enough of them.
  size_t ref_n = history_.size() - test_n;
  if (ref_n < static_cast<size_t>(std::max(config_.confirm_windows, config_.baseline_windows / 2))) {
    if (!slowed_before_) relative_.reset();
    return std::nullopt;
  }
  std::vector<double> ref;
  for (size_t i = 0; i < ref_n; ++i) ref.push_back(history_[i].value);
  double before = detector::median_in_place(ref.data(), ref.size());
  if (!slowed_before_) relative_ = history_.back().value / before;
  if (now < before * (1 + config_.min_rise)) return std::nullopt;

  // Confirmed. The change point: the first of the latest windows that all stand above the midpoint between the old
  // level and the new (the window in which the rise began; the explanation looks for hardware evidence around it).
  StepChange c{StepChange::Kind::Slowdown, history_[ref_n].window, before, now};
  const double midpoint = (before + now) / 2;
  size_t from = history_.size();
  while (from > ref_n && history_[from - 1].value >= midpoint) --from;
  if (from == history_.size()) from = history_.size() - 1;
  c.change_window = history_[from].window;
  // The new level: the windows since the change (the test window's median still holds up to 2 of the old ones).
  std::vector<double> since;
  for (size_t i = from; i < history_.size(); ++i) since.push_back(history_[i].value);
  c.after = detector::median_in_place(since.data(), since.size());
  // A second slowdown is judged against the new level: the windows after the change window start a new reference,
  // and the pre-slowdown step time is kept for the recovery. Neither the old level's windows nor the change window
  // (part old, part new; and on a loaded host the rise reaches the agent spread over a window or two) may stay in
  // it: a reference below the new level would confirm the same rise a second time (CI saw "rose 8 %" then "rose 4 %"
  // 5 windows later for one stall).
  if (!slowed_before_) slowed_before_ = before;
  history_.erase(history_.begin(), history_.begin() + static_cast<std::ptrdiff_t>(from + 1));
  return c;
}

}  // namespace gcm::jobsignal
