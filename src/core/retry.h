// Exponential backoff for retryable failures (sink writes): initial, initial*2, initial*4, ... capped, at most
// `retries` retries, interrupted by shutdown.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace gcm {

struct RetryPolicy {
  int retries = 2;                 // retries after the first attempt
  double initial_backoff_s = 10;   // the reference's schedule: 10, 20, 40 s
  double multiplier = 2;
  double max_backoff_s = 300;
  double delay_for(int retry_index) const;  // 0-based retry -> seconds
};

// Thrown by an operation that may succeed if tried again later (HTTP 429/502/503/504, connection refused).
struct RetryableError : std::runtime_error {
  RetryableError(const std::string& what, std::optional<double> retry_after_s = std::nullopt)
      : std::runtime_error(what), retry_after(retry_after_s) {}
  std::optional<double> retry_after;  // a server's Retry-After, in seconds
};

}  // namespace gcm
