#include "core/retry.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "core/shutdown.h"

namespace gcm {

double RetryPolicy::delay_for(int retry_index) const {
  return std::min(max_backoff_s, initial_backoff_s * std::pow(multiplier, retry_index));
}

double Backoff::failed(std::optional<double> retry_after_s) {
  double delay = policy_.delay_for(failures_);
  if (retry_after_s) delay = std::min(std::max(delay, *retry_after_s), policy_.max_backoff_s);
  // Capped so that a loop that fails for days does not overflow the exponent.
  if (policy_.delay_for(failures_) < policy_.max_backoff_s) ++failures_;
  return delay;
}

void retry_with_backoff(const RetryPolicy& policy, const std::function<void()>& attempt,
                        const RetryNotice& before_retry) {
  Backoff backoff(policy);
  for (int retry = 0;; ++retry) {
    try {
      attempt();
      return;
    } catch (const RetryableError& e) {
      if (retry >= policy.retries) {
        throw RetriesExhausted(
            fmt::format("{} (gave up after {} retr{})", e.what(), policy.retries, policy.retries == 1 ? "y" : "ies"),
            false);
      }
      double delay = backoff.failed(e.retry_after);
      if (before_retry) before_retry(e, retry, delay);
      if (!sleep_unless_shutdown(std::chrono::duration<double>(delay))) {
        try {
          attempt();
          return;
        } catch (const RetryableError& last) {
          throw RetriesExhausted(fmt::format("{} (shutting down, not retried further)", last.what()), true);
        }
      }
    }
  }
}

}  // namespace gcm
