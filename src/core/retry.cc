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

void retry_with_backoff(const RetryPolicy& policy, const std::function<void()>& attempt,
                        const RetryNotice& before_retry) {
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
      double delay = policy.delay_for(retry);
      if (e.retry_after) delay = std::min(std::max(delay, *e.retry_after), policy.max_backoff_s);
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
