// Forwards enriched OTLP requests (protobuf) to the downstream OTLP/HTTP endpoint.
//
// Requests of one signal are batched until `batch_items` items or `batch_timeout` (serialized export requests
// concatenate into one valid request: protobuf merges repeated fields); up to `concurrency` batches are sent at
// once, oldest first. Sealed batches wait in a memory queue of
// at most `queue_bytes`; when the downstream is slow or away and the queue is full, batches go to the disk spool
// (one file per batch, written atomically) and are sent, oldest first, when it answers again; once spooling has
// started, new batches follow the spool until it is empty, so the order of batches is kept. Retryable failures
// (no answer, 429, 502, 503, 504) are retried with exponential backoff (honouring Retry-After), others drop the
// batch with an error naming the downstream's answer. A request that neither the queue nor the spool can take is
// refused (the receiver answers it as rejected), counted and logged. On stop, what is left goes to the spool.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "processor/otlp_request.h"

namespace gcm::processor {

struct ForwarderOptions {
  std::string endpoint;              // base URL: http://host:4318 (signal paths /v1/... are appended)
  std::vector<std::string> headers;  // "Name: value"
  std::chrono::milliseconds timeout{10000};
  uint64_t batch_items = 8192;
  std::chrono::milliseconds batch_timeout{200};
  uint64_t queue_bytes = 64ull << 20;
  std::string spool_dir;  // empty: no spool
  uint64_t spool_bytes = 1ull << 30;
  double backoff_initial_s = 0.5;
  double backoff_max_s = 30;
  std::chrono::milliseconds drain_timeout{5000};  // on stop, how long to keep sending before spooling the rest
  unsigned concurrency = 4;  // batches sent at once (each on its own connection); the spool one at a time
};

enum class DownstreamState { Unknown, Up, Down };
const char* to_string(DownstreamState s);  // "unknown", "up", "down"

struct ForwarderStats {
  uint64_t forwarded = 0;            // items the downstream accepted
  uint64_t requests = 0;             // requests sent downstream (accepted)
  uint64_t retried = 0;              // failed attempts that will be retried
  uint64_t spooled = 0;              // items written to the spool
  uint64_t unspooled = 0;            // items read back from the spool and sent
  uint64_t dropped = 0;              // items lost: rejected by the downstream, unwritable spool, no room at stop
  uint64_t refused_requests = 0;     // submits refused for want of room (the receiver tells the client to retry)
  uint64_t rejected_downstream = 0;  // of the forwarded, the items the downstream reported as rejected
  uint64_t queued_items = 0;         // now in memory (pending batches and queue)
  uint64_t queue_bytes = 0;          // now in memory
  uint64_t spool_items = 0;          // now on disk
  uint64_t spool_bytes = 0;          // now on disk
  // Unknown until the first attempt ends: nothing was sent yet, so nothing is known of the downstream (a
  // processor that has only just started, or that no client has sent to, must not report it "up"). Then Up when
  // the last attempt got an answer that is not "try again" (accepted, or rejected for good), Down when it failed.
  DownstreamState downstream = DownstreamState::Unknown;
};

class Forwarder {
 public:
  Forwarder(ForwarderOptions opts, std::shared_ptr<spdlog::logger> log);
  ~Forwarder();
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  // Picks up batches spooled by an earlier run and starts sending.
  void start();
  // Sends what it can within drain_timeout, spools the rest (or counts it as dropped without a spool).
  void stop();
  // Takes one enriched request into the batch being filled: `request` is moved in, not copied, and replaced by the
  // buffer of a request already sent (or an empty one), so that the caller writes its next request into memory that
  // is allocated and touched already. False when there is no room for it (counted in refused_requests; logged at
  // most once every 10 s with the number refused since); `request` is then left as it was.
  bool take(Signal signal, std::string& request, uint64_t items);
  // Whether a request of at least `bytes` could find room now (in the queue, or the spool). One that could not is
  // refused before it is enriched (Service::export_request): rewriting requests only to refuse them took an overloaded
  // processor's CPU from those it could take.
  bool has_room(uint64_t bytes) const;
  // Counts (and logs, as take() does) a request refused for want of room without being offered to take().
  void refused(Signal signal, uint64_t items);
  // The same for a request the caller keeps (copied).
  bool submit(Signal signal, std::string_view request, uint64_t items);
  ForwarderStats stats() const;

 private:
  // Requests of one signal, sent together as one body. They stay the buffers they were written in: appending them to
  // one buffer cost a copy of every byte forwarded (the largest copy of the process under load).
  struct Batch {
    Signal signal = Signal::Metrics;
    std::vector<std::string> parts;
    uint64_t items = 0;
    uint64_t size = 0;  // bytes of the body (as spooled)
    uint64_t held = 0;  // bytes of memory its parts hold (their capacities): what the queue counts
    std::chrono::steady_clock::time_point started;
  };
  struct SpoolFile {
    std::string path;
    Signal signal;
    uint64_t items;
    uint64_t bytes;
  };
  enum class Outcome { Sent, Retry, Dropped };

  void run();
  void seal(Batch& b);         // pending -> queue or spool (mu_ held)
  bool spool(const Batch& b);  // writes one batch file (mu_ held)
  void load_spool();
  Outcome send(Signal signal, const std::vector<std::string>& body, uint64_t items, double* retry_after);
  void reuse_parts(Batch& sent);  // its buffers to spare_parts_, as far as there is room (mu_ held)
  bool room_for(uint64_t capacity, uint64_t size) const;               // (mu_ held)
  void count_refused(std::unique_lock<std::mutex>& lock, Signal signal, uint64_t items);  // (mu_ held; may unlock)

  ForwarderOptions opts_;
  std::shared_ptr<spdlog::logger> log_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Batch> pending_[3];
  std::deque<Batch> queue_;
  // The buffers of requests sent, handed back by take() for the requests to come: a fresh buffer per request cost
  // malloc's consolidation of the heap at each large free, and the zero-fill of its pages. At most spare_limit_ bytes.
  std::vector<std::string> spare_parts_;
  uint64_t spare_bytes_ = 0;
  uint64_t spare_limit_ = 0;
  std::deque<SpoolFile> spool_;
  uint64_t spool_seq_ = 0;
  ForwarderStats st_;
  struct Unlogged {  // refusals since the last log line about them (at most one line every 10 s)
    uint64_t requests = 0;
    uint64_t items[3] = {};
    std::chrono::steady_clock::time_point last_line{};  // zero: no line yet
  } unlogged_;
  bool stopping_ = false;
  bool draining_ = false;
  bool spool_busy_ = false;  // a sender has the spool's front in flight
  double backoff_ = 0;       // seconds; shared: a downstream that is away is away for every sender
  std::chrono::steady_clock::time_point next_try_{};
  std::vector<std::thread> senders_;
};

}  // namespace gcm::processor
