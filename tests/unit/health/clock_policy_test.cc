// check-nvidia-smi -c clock_policy's rule: the application clocks against the expected ones, warn and critical deltas.
#include <gtest/gtest.h>

#include "health/clock_policy.h"

namespace gcm::health {
namespace {

TEST(ClockPolicy, DriftAboveWarnAndCriticalDeltas) {
  ClockPolicy p;  // GCM's defaults: 1155 / 1593 MHz, warn 30, critical 75
  auto ok = evaluate_clock_policy(1155, 1593, p);
  EXPECT_TRUE(ok.compliant);
  EXPECT_EQ(ok.severity, ExitCode::OK);
  EXPECT_EQ(evaluate_clock_policy(1185, 1593, p).severity, ExitCode::OK);  // exactly the warn delta: not above
  auto warn = evaluate_clock_policy(1155, 1593 - 31, p);
  EXPECT_EQ(warn.severity, ExitCode::WARN);
  EXPECT_FALSE(warn.compliant);
  EXPECT_EQ(warn.memory_delta_mhz, -31);
  EXPECT_EQ(warn.graphics_delta_mhz, 0);
  // A clock set too high drifts too: the larger absolute delta decides.
  auto crit = evaluate_clock_policy(1410, 1600, p);
  EXPECT_EQ(crit.severity, ExitCode::CRITICAL);
  EXPECT_EQ(crit.graphics_delta_mhz, 255);
  EXPECT_EQ(crit.memory_delta_mhz, 7);
  EXPECT_EQ(evaluate_clock_policy(1155 + 75, 1593, p).severity, ExitCode::WARN);
  EXPECT_EQ(evaluate_clock_policy(1155 + 76, 1593, p).severity, ExitCode::CRITICAL);
}

}  // namespace
}  // namespace gcm::health
