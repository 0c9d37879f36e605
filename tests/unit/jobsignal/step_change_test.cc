// The change-point test of a job's step time: a lasting rise of 5 % or 12 % is confirmed within a bounded number of
// windows at the window it began; 2 % step jitter, a periodic all-rank evaluation pause and a single slow step or
// window are not slowdowns; a slowed job that is back to its old step time is a recovery, and is not slowed again.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "jobsignal/step_change.h"

namespace gcm::jobsignal {
namespace {

// One window's step time as the agent computes it: the median of `steps` steps of `base` seconds with relative
// Gaussian jitter; `slow_step` makes one of them that many times longer (a GC pause, a straggling batch).
double window_median(std::mt19937& rng, double base, double jitter, int steps = 10, double slow_step = 0) {
  std::normal_distribution<double> noise(0, jitter);
  std::vector<double> v;
  for (int i = 0; i < steps; ++i) v.push_back(base * (1 + noise(rng)));
  if (slow_step > 0) v[0] = base * slow_step;
  std::sort(v.begin(), v.end());
  return steps % 2 ? v[steps / 2] : (v[steps / 2 - 1] + v[steps / 2]) / 2;
}

struct ChangeRun {
  std::vector<StepChange> changes;
  std::vector<int64_t> at;  // the window at which each was confirmed
};

// `windows` windows; step time 0.1 s, times `factor(w)`; jitter 2 % per step.
template <class Factor>
ChangeRun run(int windows, Factor factor, unsigned seed = 1, double jitter = 0.02, int eval_every = 0) {
  std::mt19937 rng(seed);
  StepChangeDetector d;
  ChangeRun r;
  for (int w = 0; w < windows; ++w) {
    double value = window_median(rng, 0.1 * factor(w), jitter);
    // A periodic evaluation of every rank: one window in eval_every whose steps are 3 times as long.
    if (eval_every && w % eval_every == eval_every - 1) value *= 3;
    if (auto c = d.observe(w, value)) {
      r.changes.push_back(*c);
      r.at.push_back(w);
    }
  }
  return r;
}

TEST(StepChange, AFivePercentRiseIsConfirmedWithinTheTestWindowAtTheWindowItBegan) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    ChangeRun r = run(80, [](int w) { return w >= 40 ? 1.05 : 1.0; }, seed);
    ASSERT_EQ(r.changes.size(), 1u) << "seed " << seed;
    EXPECT_EQ(r.changes[0].kind, StepChange::Kind::Slowdown);
    EXPECT_NEAR(r.changes[0].rise(), 0.05, 0.015) << "seed " << seed;
    EXPECT_GE(r.changes[0].change_window, 40) << "seed " << seed;
    EXPECT_LE(r.changes[0].change_window, 42) << "seed " << seed;
    EXPECT_LE(r.at[0] - 40, 5) << "seed " << seed << ": confirmed after " << r.at[0] - 40 << " windows";
  }
}

// The rise reaches the agent over two windows (the change window half old, half new: on a loaded host the ranks'
// reports spread it): one slowdown. The reference after it must not keep the old or the half-way windows, or the
// same rise is confirmed again 5 windows later against a reference below the new level.
TEST(StepChange, ARiseSpreadOverTwoWindowsIsOneSlowdown) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    ChangeRun r = run(90, [](int w) { return w < 40 ? 1.0 : w == 40 ? 1.04 : 1.08; }, seed);
    ASSERT_EQ(r.changes.size(), 1u) << "seed " << seed << ": a second at window " << r.at.back() << ", rise "
                                    << r.changes.back().rise();
    EXPECT_GE(r.changes[0].change_window, 40) << "seed " << seed;
    EXPECT_LE(r.changes[0].change_window, 41) << "seed " << seed;
  }
}

TEST(StepChange, ATwelvePercentRiseIsConfirmedInThreeWindows) {
  ChangeRun r = run(80, [](int w) { return w >= 40 ? 1.12 : 1.0; });
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].change_window, 40);
  EXPECT_EQ(r.at[0], 42);  // the third slow window makes 3 of 5
  EXPECT_NEAR(r.changes[0].rise(), 0.12, 0.015);  // 3 windows of ~0.8 % noise each against the reference
}

TEST(StepChange, TwoPercentJitterAndAPeriodicEvaluationPauseAreNothing) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    ChangeRun r = run(2000, [](int) { return 1.0; }, seed, 0.02, 20);
    EXPECT_TRUE(r.changes.empty()) << "seed " << seed << ": " << r.changes.size() << " change(s), first at window "
                                   << (r.at.empty() ? -1 : r.at[0]);
  }
}

TEST(StepChange, AnEvaluationOfTwoWindowsInARowIsNothing) {
  std::mt19937 rng(3);
  StepChangeDetector d;
  for (int w = 0; w < 400; ++w) {
    double v = window_median(rng, 0.1, 0.02);
    if (w % 25 == 0 || w % 25 == 1) v *= 4;
    EXPECT_FALSE(d.observe(w, v)) << "window " << w;
  }
}

TEST(StepChange, ASingleSlowStepOrASingleSlowWindowIsNothing) {
  std::mt19937 rng(5);
  StepChangeDetector d;
  for (int w = 0; w < 200; ++w) {
    double v = window_median(rng, 0.1, 0.02, 10, w % 7 == 0 ? 20.0 : 0);  // one step 20 times as long, often
    if (w == 100) v *= 1.5;                                                // one whole window half as slow again
    EXPECT_FALSE(d.observe(w, v)) << "window " << w;
  }
}

TEST(StepChange, ARecoveryIsSaidOnceAndTheOldStepTimeIsNotASecondSlowdown) {
  ChangeRun r = run(140, [](int w) { return w >= 40 && w < 80 ? 1.10 : 1.0; });
  ASSERT_EQ(r.changes.size(), 2u);
  EXPECT_EQ(r.changes[0].kind, StepChange::Kind::Slowdown);
  EXPECT_EQ(r.changes[1].kind, StepChange::Kind::Recovery);
  EXPECT_GE(r.changes[1].change_window, 80);
  EXPECT_LE(r.at[1] - 80, 5);
  EXPECT_NEAR(r.changes[1].before, 0.1, 0.002);  // against the pre-slowdown step time
}

TEST(StepChange, RelativeStepTimeIsAgainstTheReferenceAndHeldWhileSlowed) {
  StepChangeDetector d;
  EXPECT_FALSE(d.relative());
  int w = 0;
  for (; w < 20; ++w) d.observe(w, 1.0);
  ASSERT_TRUE(d.relative());
  EXPECT_DOUBLE_EQ(*d.relative(), 1.0);
  for (; w < 40; ++w) d.observe(w, 1.2);
  EXPECT_TRUE(d.slowed());
  EXPECT_NEAR(*d.relative(), 1.2, 1e-9);  // still against 1.0, though 1.2 is the new reference for a second rise
}

TEST(StepChange, AWindowWithoutStepsIsSkipped) {
  StepChangeDetector d;
  for (int w = 0; w < 20; ++w) d.observe(w, 1.0);
  for (int w = 20; w < 40; ++w) EXPECT_FALSE(d.observe(w, std::nullopt));
  EXPECT_DOUBLE_EQ(*d.relative(), 1.0);
}

}  // namespace
}  // namespace gcm::jobsignal
