// The project's one retry policy for deliveries (sink writes): exponential backoff for retryable failures — initial,
// initial*2, initial*4, ... capped — at most `retries` retries, a server's Retry-After honoured, the wait cut short
// by a shutdown. Every sink that sends over the network retries through retry_with_backoff, so --retries and
// --retry-backoff mean the same for all of them.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace gcm {

struct RetryPolicy {
  int retries = 2;                // retries after the first attempt
  double initial_backoff_s = 10;  // the reference's schedule: 10, 20, 40 s
  double multiplier = 2;
  double max_backoff_s = 300;
  double delay_for(int retry_index) const;  // 0-based retry -> seconds
};

// The waits between the failed attempts of something tried again and again (a receiver that is away, a library that
// is not loaded yet, a device that cannot be opened): the policy's first delay, multiplied after each failure up to
// its cap; a success starts the schedule again. retry_with_backoff waits by it, and so does every loop of the
// project that retries without end (the OTLP delivery's senders, the agent's NVML loader, the kernel-log follower).
class Backoff {
 public:
  explicit Backoff(const RetryPolicy& policy) : policy_(policy) {}
  Backoff(double initial_s, double max_s) {
    policy_.initial_backoff_s = initial_s;
    policy_.max_backoff_s = max_s;
  }
  // Counts a failure; the seconds to wait before the next attempt: the schedule's, or a server's Retry-After when
  // that is longer, never more than the cap.
  double failed(std::optional<double> retry_after_s = std::nullopt);
  std::chrono::milliseconds failed_ms(std::optional<double> retry_after_s = std::nullopt) {
    return std::chrono::milliseconds(static_cast<int64_t>(failed(retry_after_s) * 1000));
  }
  void succeeded() { failures_ = 0; }
  int failures() const { return failures_; }
  // The wait the next failure will be given (without a Retry-After).
  double next_delay_s() const { return policy_.delay_for(failures_); }
  const RetryPolicy& policy() const { return policy_; }

 private:
  RetryPolicy policy_;
  int failures_ = 0;
};

// Thrown by an operation that may succeed if tried again later (HTTP 429/502/503/504, connection refused).
struct RetryableError : std::runtime_error {
  RetryableError(const std::string& what, std::optional<double> retry_after_s = std::nullopt)
      : std::runtime_error(what), retry_after(retry_after_s) {}
  std::optional<double> retry_after;  // a server's Retry-After, in seconds
};

// What retry_with_backoff throws when no attempt succeeded. The message is the last failure's with why it stopped:
// "(gave up after N retries)", or "(shutting down, not retried further)" when a shutdown cut the wait short.
struct RetriesExhausted : std::runtime_error {
  RetriesExhausted(const std::string& what, bool by_shutdown) : std::runtime_error(what), shutting_down(by_shutdown) {}
  bool shutting_down;
};

// Called before each wait: the failure, the 0-based retry about to be made and the wait in seconds.
using RetryNotice = std::function<void(const RetryableError& failure, int retry, double delay_s)>;

// Runs `attempt` until it returns, retrying each RetryableError after the policy's delay (at least a Retry-After,
// never more than max_backoff_s). Any other exception passes through at once. A shutdown requested during a wait
// ends it with one last immediate attempt, so a flush at exit still delivers when the receiver is back.
void retry_with_backoff(const RetryPolicy& policy, const std::function<void()>& attempt,
                        const RetryNotice& before_retry = nullptr);

}  // namespace gcm
