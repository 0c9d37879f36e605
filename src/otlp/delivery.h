// The project's one way to deliver OTLP: a queue of requests (in memory, on the durable spool of otlp/spool.h, or
// both), senders that take them oldest first through otlp/transport.h, retries on core/retry.h's Backoff, and one
// reading of every answer (otlp/answer.h). The agent's push, slurm_processor's forwarding and the otel sink all
// deliver through it; they differ only in the options below.
//
// Two ways to wait for the receiver:
//   - SpoolPolicy::Always (the agent): every request is appended to the spool, durably, before take() returns, and
//     one sender delivers the spool in order. Nothing is kept in memory, so a kill -9 or a power cut loses nothing
//     that take() accepted.
//   - SpoolPolicy::OnOutage (slurm_processor): requests of one signal are batched in memory (`batch_items` or
//     `batch_timeout`; serialized export requests concatenate into one valid request) and up to `concurrency`
//     batches are sent at once, oldest first, from a memory queue of at most `queue_bytes`. When a send fails for a
//     reason that may pass, or the queue is full, what is in memory goes to the spool, and later requests are
//     written there before take() returns, until the spool is empty again, so the order is kept and an outage
//     loses nothing to a kill -9 (the spool is synced at least every second, so a power cut loses at most that).
//     While the receiver keeps up, what was taken is in memory only until sent: a kill -9 then loses at most
//     `queue_bytes`. Without a spool directory, OnOutage keeps everything in memory.
// Either way an entry leaves the queue only when the receiver answered it: accepted (its partial success counted),
// rejected for good (400, 413, 422, INVALID_ARGUMENT: dropped and counted), or refused for a reason that is the
// receiver's (401, 403, 404, 5xx: kept and retried with `keep_refused`, else dropped and counted). A request whose
// answer was lost (a timeout, a connection cut after the receiver took it) is sent again: at-least-once.
//
// deliver_now() is the same transport and reading of answers for a caller that waits (the otel sink's chunk),
// retried by the sink's own --retries in the caller's thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "core/retry.h"
#include "otlp/signal.h"
#include "otlp/spool.h"
#include "otlp/transport.h"

namespace gcm::otlp {

enum class SpoolPolicy { Always, OnOutage };

struct DeliveryOptions {
  std::string name = "otlp";  // the first word of its log lines: "slurm_processor", "agent"
  std::shared_ptr<const TransportConfig> transport;
  SpoolPolicy spool_policy = SpoolPolicy::OnOutage;
  std::string spool_dir;  // empty: no spool (OnOutage only)
  uint64_t spool_bytes = 1ull << 30;
  uint64_t batch_items = 8192;
  std::chrono::milliseconds batch_timeout{200};
  uint64_t queue_bytes = 64ull << 20;
  unsigned concurrency = 4;  // batches in flight at once (each on its own connection); the spool one at a time
  // The senders' waits after a failure: initial, doubling, capped (its `retries` is not used: a queued request is
  // retried until it is delivered or dropped).
  RetryPolicy backoff{0, 0.5, 2, 30};
  std::chrono::milliseconds drain_timeout{5000};  // stop(): how long to keep sending before spooling the rest
  bool keep_refused = false;                      // 401, 403, 404, 5xx: keep the request and retry it
};

enum class DownstreamState { Unknown, Up, Down };
const char* to_string(DownstreamState s);  // "unknown", "up", "down"

struct DeliveryStats {
  uint64_t delivered = 0;          // items the receiver accepted
  uint64_t requests = 0;           // requests the receiver accepted
  uint64_t retried = 0;            // failed attempts that will be retried
  uint64_t spooled = 0;            // items written to the spool
  uint64_t unspooled = 0;          // items read back from the spool and delivered
  uint64_t dropped = 0;            // items lost: rejected or refused by the receiver, unwritable spool, no room
  uint64_t refused_requests = 0;   // takes refused for want of room (the caller's client is told to retry)
  uint64_t rejected_partial = 0;   // of the delivered, the items the receiver reported as rejected
  uint64_t queued_items = 0;       // now in memory (pending batches and queue)
  uint64_t queue_bytes = 0;        // now in memory
  SpoolStats spool;                // now on disk, and what the spool itself dropped for room or found corrupt
  double oldest_age_seconds = 0;   // of the oldest entry on the spool; 0 when it is empty
  std::string last_error;          // the last failure's message; "" before any
  // Unknown until the first attempt ends (nothing is known of a receiver nobody sent to), then Up when the last
  // attempt got an answer that is not "try again", Down when it failed.
  DownstreamState downstream = DownstreamState::Unknown;
  // Everything lost on the way: dropped here, and the oldest entries the spool dropped when it was full.
  uint64_t lost() const { return dropped + spool.dropped_points; }
};

// What deliver_now() throws. TransientExportError: every attempt failed in a way that may pass (no answer,
// 429/502/503/504, a retryable gRPC code). RejectedRequestError: the receiver refused the request's bytes. Any
// other ExportError: a final answer about the receiver or its configuration.
struct ExportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct TransientExportError : ExportError {
  using ExportError::ExportError;
};
struct RejectedRequestError : ExportError {
  using ExportError::ExportError;
};

class Delivery {
 public:
  // Throws TransportError when the transport cannot work, SpoolError when the spool cannot be opened.
  Delivery(DeliveryOptions opts, std::shared_ptr<spdlog::logger> log);
  ~Delivery();  // stop()
  Delivery(const Delivery&) = delete;
  Delivery& operator=(const Delivery&) = delete;

  // Starts the senders; what an earlier run left on the spool is delivered first.
  void start();
  // Sends what it can within drain_timeout, spools what is left in memory (or counts it as dropped without a spool),
  // and joins the senders after the requests in flight. Idempotent.
  void stop();
  // Waits until nothing is queued (memory and spool) or the timeout passes, retrying at the first backoff
  // meanwhile; true when everything was delivered.
  bool flush(std::chrono::milliseconds timeout);

  // Takes one serialized export request: `request` is moved in, not copied, and replaced by the buffer of a request
  // already sent (or an empty one), so that the caller writes its next request into memory that is allocated and
  // touched already. False when it cannot be kept: no room (counted in refused_requests, logged at most once every
  // 10 s) or, with SpoolPolicy::Always, a spool that cannot write it (counted in dropped, logged); `request` is then
  // left as it was.
  bool take(Signal signal, std::string& request, uint64_t items);
  // The same for a request the caller keeps (copied).
  bool submit(Signal signal, std::string_view request, uint64_t items);
  // Whether a request of `bytes` could find room now (memory or spool): one that could not is refused before the
  // caller spends work on it.
  bool has_room(uint64_t bytes) const;
  // Counts (and logs, as take() does) a request refused for want of room without being offered to take().
  void refused(Signal signal, uint64_t items);

  // Sends one request now from the calling thread, retrying by `policy`; throws the errors above.
  void deliver_now(Signal signal, const std::string& request, uint64_t items, const RetryPolicy& policy);

  DeliveryStats stats() const;

 private:
  // Requests of one signal, sent together as one body: they stay the buffers they were written in, since appending
  // them to one buffer would copy every byte delivered.
  struct Batch {
    Signal signal = Signal::Metrics;
    std::vector<std::string> parts;
    uint64_t items = 0;
    uint64_t size = 0;  // bytes of the body
    uint64_t held = 0;  // bytes of memory its parts hold (their capacities): what the queue counts
    std::chrono::steady_clock::time_point started;
  };
  enum class Outcome { Delivered, Retry, Dropped };

  void run();
  // Appends to the spool and counts it (mu_ held; released while writing when `unlock_while_writing` is given).
  bool append_to_spool(Signal signal, std::span<const std::string> parts, uint64_t items, Spool::Sync sync,
                       std::unique_lock<std::mutex>* unlock_while_writing);
  void seal(Batch& b);                        // pending -> queue or spool (mu_ held)
  void spool_batch(const Batch& b);           // appends it (mu_ held)
  void spill();                               // pending batches and the queue to the spool (mu_ held)
  bool spooling() const;                      // new requests go to the spool (mu_ held)
  Outcome outcome_of(const ExportAnswer& a, Signal signal, uint64_t items);  // counts and logs (mu_ held)
  void send_from_queue(std::unique_lock<std::mutex>& lock, Transport& transport);
  void send_from_spool(std::unique_lock<std::mutex>& lock, Transport& transport);
  void after_failure(const ExportAnswer& a);  // backoff and state (mu_ held)
  void reuse_parts(Batch& sent);              // its buffers to spare_parts_, as far as there is room (mu_ held)
  bool room_for(uint64_t capacity, uint64_t size) const;                                  // (mu_ held)
  void count_refused(std::unique_lock<std::mutex>& lock, Signal signal, uint64_t items);  // (mu_ held; may unlock)
  void note_error(const std::string& what);                                                // (mu_ held)
  bool empty() const;                                                                      // (mu_ held)

  DeliveryOptions opts_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<Spool> spool_;  // thread-safe itself; null without a spool directory

  // Everything below is guarded by mu_.
  mutable std::mutex mu_;
  std::condition_variable cv_;  // the senders: work, a stop, a flush; flush() and stop(): progress
  std::optional<Batch> pending_[kSignalCount];
  std::deque<Batch> queue_;
  // The buffers of requests sent, handed back by take() for the requests to come: a fresh buffer per request costs
  // malloc's consolidation of the heap at each large free and the zero-fill of its pages. At most spare_limit_.
  std::vector<std::string> spare_parts_;
  uint64_t spare_bytes_ = 0;
  uint64_t spare_limit_ = 0;
  bool spool_busy_ = false;   // a sender has the spool's front in flight
  bool spool_dirty_ = false;  // appended with Sync::Later since the last sync
  std::chrono::steady_clock::time_point synced_at_{};
  DeliveryStats st_;  // its spool, age and queue figures are filled in by stats()
  struct Unlogged {   // refusals since the last log line about them (at most one line every 10 s)
    uint64_t requests = 0;
    uint64_t items[kSignalCount] = {};
    std::chrono::steady_clock::time_point last_line{};  // zero: no line yet
  } unlogged_;
  bool started_ = false, stopping_ = false, draining_ = false, flushing_ = false;
  Backoff backoff_;  // shared: a receiver that is away is away for every sender
  std::chrono::steady_clock::time_point next_try_{};
  std::vector<std::thread> senders_;

  std::mutex now_mu_;  // deliver_now()'s transport, one caller at a time
  std::unique_ptr<Transport> now_transport_;
};

}  // namespace gcm::otlp
