// The agent's on-disk spool: a bounded, durable FIFO of opaque entries (encoded OTLP export requests) that keeps
// windows while the backend is down and gives them back oldest first.
//
// Layout of the directory (0700, owned by the agent's user, writable by no one else):
//   seg-<first seq, 20 digits>.log  append-only segments of framed entries (spool_format.h)
//   ack                             the sequence number of the last entry delivered or dropped, replaced atomically
//   lock                            flock'ed while open, so two agents never share a spool
// The ack file is the only truth about what was delivered: an entry is live when its seq is above it. Segments whose
// entries are all acknowledged are garbage and deleted after the ack is durable, so a crash between the two leaves
// a segment that the next open deletes, never one that is replayed.
//
// What survives what:
//   - kill -9: every append() that returned (its bytes are in the page cache); the window being written when the
//     process died may be torn, and open() truncates it. A pop_front() that returned is never replayed; a request
//     sent but not yet acknowledged is sent again (at-least-once).
//   - power cut: the same, since append() and pop_front() fdatasync before returning.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include <spdlog/logger.h>

namespace gcm::agent {

enum class SpoolKind : uint8_t { Metrics = 1, Logs = 2 };

struct SpoolEntry {
  uint64_t seq = 0;  // strictly increasing over the spool's life, across restarts
  SpoolKind kind = SpoolKind::Metrics;
  uint64_t points = 0;           // data points or log records in the request
  int64_t appended_unix_ms = 0;  // wall clock when appended, for the spool's age
  std::string bytes;             // the serialized request
};

struct SpoolStats {
  uint64_t entries = 0;          // live (unacknowledged) entries
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

  // Appends durably; drops the oldest entries first when the entry would not fit. Returns false (and counts it)
  // when the entry alone is larger than max_bytes. Throws SpoolError on an I/O failure.
  bool append(SpoolKind kind, uint64_t points, const std::string& bytes);
  // The oldest live entry, read from disk; nullopt when empty.
  std::optional<SpoolEntry> front();
  // Acknowledges the entry `seq` that front() returned, durably. A no-op when that entry is no longer the front
  // (dropped for room meanwhile), so a pop never acknowledges an entry that was not sent.
  void pop_front(uint64_t seq);
  SpoolStats stats() const;
  const std::string& dir() const;

  struct State;  // spool.cc

 private:
  explicit Spool(std::unique_ptr<State> state);
  mutable std::mutex mu_;
  std::unique_ptr<State> s_;
};

}  // namespace gcm::agent
