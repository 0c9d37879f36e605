// Follows the kernel log on its own thread: every record since boot at start, then each new one as it arrives,
// parsed (agent/kmsg_record.h) and scanned for XIDs (health/xid_line.h), delivered to a callback.
//
// The path (`--path.kmsg`, default /dev/kmsg) may be
//   - a character device (/dev/kmsg): each read() returns one record; EPIPE means the ring overwrote records we had
//     not read yet: counted as an overflow, and reading goes on with the oldest record still there;
//   - a FIFO (tests stand one in for /dev/kmsg) or a regular file: records one per line, their dictionary lines
//     beginning with ' '. A FIFO whose writer closed is reopened to wait for the next writer (a closed FIFO polls
//     readable for ever: waiting on it would spin); a regular file is read to its end, then watched for growth.
// A record is complete when the next one begins, or when the source has been idle for one poll interval.
// Nothing blocks without a timeout: stop() returns within one poll interval, at most, and usually at once.
// A path that cannot be opened (ENOENT, EACCES when not root) is logged once per distinct error, shown in the
// stats, and retried with a backoff: never a crash, never a log line per retry.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include <spdlog/spdlog.h>

#include "agent/kmsg_record.h"
#include "health/xid_line.h"

namespace gcm::agent {

struct KmsgFollowerOptions {
  std::string path = "/dev/kmsg";
  // A longer record or line is skipped and counted. /dev/kmsg records are at most 1 KiB of text plus the
  // dictionary (the kernel's own bound for a formatted record is 8 KiB).
  size_t max_record = 8192;
  std::chrono::milliseconds poll_interval{200};   // the longest wait without looking at stop(), and the idle flush
  std::chrono::milliseconds retry_initial{1000};  // backoff between failed opens: doubles up to retry_max
  std::chrono::milliseconds retry_max{60000};
  std::shared_ptr<spdlog::logger> log;  // null: spdlog's default logger
};

// Counters since start; a snapshot (stats()) is safe to take from any thread.
struct KmsgFollowerStats {
  uint64_t records = 0;         // records delivered to the callback
  uint64_t xids = 0;            // records that reported an XID or SXid
  uint64_t overflows = 0;       // EPIPE reads: the ring overwrote records before they were read
  uint64_t records_lost = 0;    // records those overflows skipped (the gap in sequence numbers)
  uint64_t long_records = 0;    // records or lines longer than max_record, skipped
  uint64_t bad_records = 0;     // records that did not parse, skipped (last_bad_record says why)
  uint64_t open_errors = 0;     // failed attempts to open the path (each retry counts)
  uint64_t reopens = 0;         // FIFO writers that went away (the FIFO is reopened to wait for the next)
  bool open = false;            // the path is open and being followed now
  std::string last_error;       // the last open or read error ("" none yet); kept after a recovery
  std::string last_bad_record;  // why the last bad record was rejected
};

class KmsgFollower {
 public:
  // Called on the follower's thread for every record, with the XID it reports (nullopt: none). The record's and
  // the XID's views are valid during the call only.
  using Callback = std::function<void(const KmsgRecord&, const std::optional<health::XidLine>&)>;

  KmsgFollower(KmsgFollowerOptions options, Callback callback);
  ~KmsgFollower();  // stops
  KmsgFollower(const KmsgFollower&) = delete;
  KmsgFollower& operator=(const KmsgFollower&) = delete;

  void start();  // starts the thread (once)
  void stop();   // wakes the thread and joins it; safe to call twice or without start()
  KmsgFollowerStats stats() const;

  // The read loop's parts, public so tests can drive them (an overflow of a real /dev/kmsg cannot be caused on
  // demand). A read function has read(2)'s contract: one record per call, -1 with errno set on failure.
  using ReadFn = std::function<ssize_t(char* buf, size_t len)>;
  // Reads a /dev/kmsg-like source until it would block (EAGAIN) or `budget` reads were made. Returns 0, or the
  // errno of a read that failed for good (the caller reopens).
  int drain_device(const ReadFn& read_fn, size_t budget = SIZE_MAX);
  // Parses one record's text (header line and dictionary lines) and delivers it, or counts it as bad.
  void deliver(std::string_view record_text);

 private:
  enum class Kind { Device, Fifo, File };
  void run();
  int open_path(Kind* kind);       // the fd, or -1 after counting and logging the error
  bool follow(int fd, Kind kind);  // until stop, a FIFO's EOF, or an error (then true, and logged)
  bool wait_readable(int fd, std::chrono::milliseconds timeout);  // false on timeout or stop
  void sleep_for(std::chrono::milliseconds d);                    // returns early on stop
  // Line mode (FIFO, file): assembles records from lines.
  void feed_lines(std::string_view chunk);  // splits into lines, bounded by max_record
  void end_line();
  void on_line(std::string_view line);
  void on_long_line(bool dictionary_line);
  void flush_record();
  void note_error(const std::string& what);  // counts in stats, logs once per distinct text
  void note_open();
  void reject(bool too_long, std::string_view why);

  KmsgFollowerOptions options_;
  Callback callback_;
  health::XidLineParser xid_parser_;  // the follower thread's only
  std::string line_;                  // line mode: the line being read, at most max_record bytes
  bool line_too_long_ = false;
  bool line_is_dictionary_ = false;       // its first byte was ' ' (kept to know what a too-long line was)
  std::string pending_;                   // line mode: the record being assembled
  bool skipping_record_ = false;          // line mode: the record's header was too long; drop its dictionary
  std::optional<uint64_t> last_seq_;      // device mode: the last record's sequence number
  std::optional<uint64_t> resume_after_;  // device mode, reopened: records up to this one were delivered already
  bool after_overflow_ = false;
  int rejects_in_a_row_ = 0;  // device mode: bad or long records since the last good one (/dev/zero is no kmsg)

  mutable std::mutex mu_;
  KmsgFollowerStats stats_;
  std::set<std::string> logged_errors_;  // guarded by mu_; bounded (see note_error)
  bool unrecovered_ = false;             // guarded by mu_: an error since the last successful open

  std::atomic<bool> stopping_{false};
  int wake_fd_ = -1;  // an eventfd that stop() writes: wakes every wait at once
  std::thread thread_;
};

// The Unix time (seconds) of a /dev/kmsg timestamp: the kernel stamps records with its monotonic clock (boot
// time, without suspend), so now's realtime minus now's monotonic time plus the stamp.
double kmsg_unix_time(uint64_t ts_usec);

}  // namespace gcm::agent
