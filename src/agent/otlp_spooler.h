// The agent's OTLP push: every window is appended to the on-disk spool first, and one sender thread delivers the
// spool oldest first through otlp::Exporter. An entry leaves the spool only after the receiver accepted it (2xx, gRPC
// OK) or rejected it for good; a transient failure (connection refused, 429/502/503/504, gRPC UNAVAILABLE, ...) keeps
// it at the front and the sender waits (backoff 1 s doubling to 30 s, cut short by a new window, flush or stop) and
// sends the same entry again. So windows arrive in order and each once, with one exception that no sender can rule
// out: when the receiver accepted a request but its answer was lost (timeout, connection cut, a crash before the
// ack was written), the entry is sent again. At-least-once is the guarantee.
//
// What the agent calls: construct it (the thread starts), enqueue() each window's requests, stats() for its
// self-metrics, flush(timeout) on SIGTERM, then destroy it. What is not delivered stays on disk for the next start.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <spdlog/logger.h>

#include "agent/spool.h"
#include "otlp/encode.h"
#include "otlp/exporter.h"

namespace gcm::agent {

struct SpoolerOptions {
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{30000};
};

struct SpoolerStats {
  uint64_t sent_entries = 0;
  uint64_t sent_points = 0;
  uint64_t send_failures = 0;     // failed attempts that will be retried (gcm_agent_export_failures_total)
  uint64_t rejected_entries = 0;  // refused for good by the receiver (HTTP 400, 401, 413, 500, ...), dropped
  uint64_t rejected_points = 0;
  uint64_t unspooled_points = 0;  // points of windows the spool could not write (disk full, I/O error)
  SpoolStats spool;               // depth, bytes, drops for room, corrupt tails
  double oldest_age_seconds = 0;  // age of the oldest entry still queued; 0 when empty
  std::string last_error;         // the last failure's message; "" before any
  // Everything lost on the way (gcm_agent_dropped_points_total): spool full, oversized, rejected, unwritable.
  uint64_t dropped_points() const { return spool.dropped_points + rejected_points + unspooled_points; }
};

class OtlpSpooler {
 public:
  // cfg as sinks/otel_config.h builds it; its retry count is set to 0 here, since this class does the retrying and
  // must not sit in the exporter's own backoff while a stop or a new window is waiting.
  OtlpSpooler(otlp::ExporterConfig cfg, std::unique_ptr<Spool> spool, std::shared_ptr<spdlog::logger> log,
              SpoolerOptions opts = {});
  ~OtlpSpooler();  // stop()
  OtlpSpooler(const OtlpSpooler&) = delete;
  OtlpSpooler& operator=(const OtlpSpooler&) = delete;

  // Appends one window's request to the spool (nothing for an empty builder). False when it could not be spooled
  // (logged and counted in the stats).
  bool enqueue(const otlp::MetricsBuilder& metrics);
  bool enqueue(const otlp::LogsBuilder& logs);
  bool enqueue(SpoolKind kind, uint64_t points, const std::string& serialized_request);

  // Waits until the spool is empty or the timeout passes, retrying at the initial backoff meanwhile; true when
  // everything was delivered. A request in flight at the deadline is waited for by stop() (up to the exporter's
  // timeout).
  bool flush(std::chrono::milliseconds timeout);
  // Stops the sender after the request in flight, if any; idempotent.
  void stop();
  SpoolerStats stats() const;

 private:
  enum class Outcome { Delivered, Dropped, Failed };
  void run();
  Outcome send(const SpoolEntry& e);
  Outcome drop(const SpoolEntry& e, const std::string& why);
  void fail(const std::string& why);
  void wait_after_failure(std::chrono::milliseconds backoff, uint64_t appends);

  otlp::Exporter exporter_;
  std::unique_ptr<Spool> spool_;
  std::shared_ptr<spdlog::logger> log_;
  SpoolerOptions opts_;

  mutable std::mutex mu_;
  std::condition_variable wake_;      // the sender: a new entry, a flush or a stop
  std::condition_variable progress_;  // flush(): an entry left the spool or an attempt failed
  uint64_t appends_ = 0;              // bumped by each enqueue, under mu_
  bool flushing_ = false;
  bool stopping_ = false;
  std::string last_error_;

  std::atomic<uint64_t> sent_entries_{0}, sent_points_{0}, send_failures_{0}, rejected_entries_{0}, rejected_points_{0},
      unspooled_points_{0};
  std::thread thread_;
};

}  // namespace gcm::agent
