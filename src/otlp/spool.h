// The on-disk spool of OTLP delivery (otlp/delivery.h): a bounded, durable FIFO of encoded OTLP export requests that
// keeps them while the receiver is down and gives them back oldest first. The agent's windows and the processor's
// batches wait in it alike.
//
// Layout of the directory (0700, owned by the process's user, writable by no one else):
//   seg-<first seq, 20 digits>.log  append-only segments of framed entries (spool_format.h)
//   ack                             the sequence number of the last entry delivered or dropped, replaced atomically
//   lock                            flock'ed while open, so two processes never share a spool
// The ack file is the only truth about what was delivered: an entry is live when its seq is above it. Segments whose
// entries are all acknowledged are garbage and deleted after the ack is durable, so a crash between the two leaves
// a segment that the next open deletes, never one that is replayed.
//
// What survives what:
//   - kill -9: every append() that returned (its bytes are in the page cache); the entry being written when the
//     process died may be torn, and open() truncates it. A pop that returned is never replayed; a request sent but
//     not yet acknowledged is sent again (at-least-once).
//   - power cut: the same for every append made with Sync::Now or followed by a sync(), since they and the pops
//     fdatasync before returning; an append made with Sync::Later since the last sync() may be lost.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "otlp/signal.h"

namespace gcm::otlp {

struct SpoolEntry {
  uint64_t seq = 0;  // strictly increasing over the spool's life, across restarts
  Signal signal = Signal::Metrics;
  uint64_t points = 0;           // data points or log records in the request
  int64_t appended_unix_ms = 0;  // wall clock when appended, for the spool's age
  std::string bytes;             // the serialized request
};

struct SpoolStats {
  uint64_t entries = 0;          // live (unacknowledged) entries
  uint64_t points = 0;           // their points
  uint64_t bytes = 0;            // bytes of the segment files on disk (what max_bytes bounds)
  int64_t oldest_unix_ms = 0;    // append time of the oldest live entry; 0 when empty
  uint64_t dropped_entries = 0;  // oldest entries dropped for room, and entries refused as larger than max_bytes
  uint64_t dropped_points = 0;   // their points
  uint64_t refused_entries = 0;  // of dropped_entries, those refused as larger than max_bytes
  uint64_t corrupt_tails = 0;    // torn or corrupt segment tails truncated by open()
  uint64_t corrupt_entries = 0;  // entries that failed their CRC when read back (skipped)
};

// Thrown when the spool cannot be opened (untrusted or unusable directory, held by another process) or written.
struct SpoolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Thread-safe: one thread appends while another reads the front and pops it.
class Spool {
 public:
  static std::unique_ptr<Spool> open(const std::string& dir, uint64_t max_bytes,
                                     std::shared_ptr<spdlog::logger> log = nullptr);
  ~Spool();
  Spool(const Spool&) = delete;
  Spool& operator=(const Spool&) = delete;

  enum class Sync { Now, Later };
  // Appends one entry whose bytes are `parts` one after the other (one request, or requests that concatenate into
  // one); drops the oldest entries first when it would not fit. Sync::Now returns once it is on disk (fdatasync);
  // Sync::Later once the kernel has it, which a kill -9 does not lose, and sync() makes it durable. Returns false
  // (and counts it) when the entry alone is larger than max_bytes. Throws SpoolError on an I/O failure.
  bool append(Signal signal, uint64_t points, std::span<const std::string> parts, Sync sync = Sync::Now);
  bool append(Signal signal, uint64_t points, const std::string& bytes, Sync sync = Sync::Now) {
    return append(signal, points, std::span<const std::string>(&bytes, 1), sync);
  }
  // Makes every append so far durable.
  void sync();
  // The oldest live entry, read from disk; nullopt when empty.
  std::optional<SpoolEntry> front();
  // The oldest live entries of the front's signal, in order, as many as fit in max_points and max_bytes (always at
  // least the front): sent together as one request, then acknowledged with pop_through. Empty when the spool is.
  std::vector<SpoolEntry> front_batch(uint64_t max_points, uint64_t max_bytes);
  // Acknowledges the entry `seq` that front() returned, durably. A no-op when that entry is no longer the front
  // (dropped for room meanwhile), so a pop never acknowledges an entry that was not sent.
  void pop_front(uint64_t seq);
  // Acknowledges every live entry up to and including `seq`, durably, as one ack.
  void pop_through(uint64_t seq);
  SpoolStats stats() const;
  const std::string& dir() const;

  struct State;  // spool.cc

 private:
  explicit Spool(std::unique_ptr<State> state);
  mutable std::mutex mu_;
  std::unique_ptr<State> s_;
};

}  // namespace gcm::otlp
