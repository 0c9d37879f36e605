// gcm sacct_backfill new|from_file (gcm-reference.md §1.16): walks a time range in chunks; for each chunk runs
// `gcm fsacct ...` (the argv of §1.5) and feeds its output to the publish command given after `--`.
//
// Differences from the reference, for exactly-once publishing:
// - fsacct's output is staged in an unlinked temporary file and the publish command starts only once fsacct
//   succeeded, so a sacct killed mid-stream or timed out never publishes a partial chunk;
// - a failed chunk (fsacct or publish failure or timeout) is retried --retries times, --retry-wait seconds apart;
// - every published chunk is recorded (fsync'ed) in a state file; a restarted backfill skips those chunks, so a
//   chunk is never published twice, and the ones that failed or were interrupted are done again.
// The reference's rendezvous server (a Python multiprocessing barrier between clusters) is Meta-specific and left out.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <spdlog/logger.h>

#include "core/time_zone.h"

namespace gcm::sacct {

struct Chunk {
  int64_t start = 0, end = 0;  // unix seconds, both inclusive
  friend bool operator<(const Chunk& a, const Chunk& b) {
    return std::pair(a.start, a.end) < std::pair(b.start, b.end);
  }
  friend bool operator==(const Chunk& a, const Chunk& b) = default;
};

// [s, s+step-1], [s+step, s+2step-1], ..., [s+n*step, e]. Throws std::invalid_argument for step <= 1 s or e < s.
std::vector<Chunk> gen_time_bounds(int64_t start, int64_t end, int64_t step_seconds);

// from_file: CSV rows "start,end", each a date (date_expr.h); blank lines and lines starting with '#' are skipped.
// Throws std::invalid_argument naming the line.
std::vector<Chunk> read_intervals(const std::string& text, int64_t now, const TimeZone& zone);

// The chunks already published, one line each: "done <start> <end> <records> <start ISO> <end ISO>". Appended and
// fsync'ed after each publish; a torn last line (a crash while writing) is ignored. Before each publish command a
// "publishing <start> <end> <records> <start ISO> <end ISO>" line is written too: a chunk that has it and no "done"
// line was cut off while its publisher ran (the backfill was killed; its publisher died with it), so it may be
// partly published; a rerun names it and publishes it again.
class BackfillState {
 public:
  BackfillState() = default;                 // no file: nothing is remembered
  explicit BackfillState(std::string path);  // loads it when it exists; throws std::runtime_error naming it
  bool done(const Chunk& c) const;
  // Published by an earlier run that was killed while the publish command ran (and is not done since).
  bool interrupted(const Chunk& c) const;
  void mark_done(const Chunk& c, uint64_t records, const TimeZone& zone);        // throws std::runtime_error
  void mark_publishing(const Chunk& c, uint64_t records, const TimeZone& zone);  // throws std::runtime_error
  const std::string& path() const { return path_; }
  size_t size() const { return done_.size(); }

 private:
  std::string path_;
  std::set<Chunk> done_;
  std::set<Chunk> publishing_;  // as read from the file, without the ones done
  mutable std::mutex mu_;

  void append(const std::string& word, const Chunk& c, uint64_t records, const TimeZone& zone);
};

struct BackfillOptions {
  std::string gcm_binary;  // this program (for `gcm fsacct`)
  std::string cluster;
  std::vector<std::string> publish_cmd;
  std::chrono::milliseconds sacct_timeout{std::chrono::seconds(120)};
  std::chrono::milliseconds publish_timeout{std::chrono::seconds(120)};
  std::chrono::milliseconds sleep{std::chrono::seconds(10)};  // between serial chunks
  std::chrono::milliseconds retry_wait{std::chrono::seconds(10)};
  int retries = 2;
  int concurrently = 1;   // 0: every chunk at once
  std::string temp_dir;   // where chunk output is staged ("" = $TMPDIR or /tmp)
  bool progress = false;  // a progress bar on stderr (a terminal)
  TimeZone zone;
};

// The argv of `gcm fsacct` for one chunk (§1.5).
std::vector<std::string> fsacct_chunk_argv(const BackfillOptions& o, const Chunk& c);

struct ChunkResult {
  bool ok = false;
  uint64_t records = 0;
  int attempts = 0;
  std::string error;  // the last failure
};

struct BackfillSummary {
  size_t chunks = 0, skipped = 0, published = 0, failed = 0;
  uint64_t records = 0;
};

// Runs one chunk once: fsacct into a staged file, then the publish command on it (before_publish, when given, runs
// just before it starts, with the chunk's record count; a throw fails the attempt). Never throws. Both commands get
// SIGKILL if this process dies (PR_SET_PDEATHSIG), so none outlives a killed backfill.
ChunkResult run_chunk_once(const BackfillOptions& o, const Chunk& c,
                           const std::function<void(uint64_t records)>& before_publish = {});

// Runs every chunk not in state (with retries), recording each published one. Stops early on SIGTERM/SIGINT.
BackfillSummary run_backfill(const BackfillOptions& o, const std::vector<Chunk>& chunks, BackfillState& state,
                             spdlog::logger& log);

}  // namespace gcm::sacct
