// Reads the kernel ring buffer the way `dmesg` does, without spawning it: /dev/kmsg (non-blocking reads of one record
// each until EAGAIN), or a file holding /dev/kmsg records, `dmesg` output or syslog lines (fixtures, saved logs).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/line_splitter.h"

namespace gcm::health {

struct KernelLogError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct KernelLogLine {
  std::string_view message;        // the text after the record header or "[timestamp] " prefix
  std::optional<double> uptime_s;  // seconds since boot when the line carries a timestamp
};

// One line of any of the accepted forms: "6,1234,5678901,-;msg" (/dev/kmsg), "[ 5678.901234] msg" (dmesg),
// anything else as it is (syslog). Continuation lines of /dev/kmsg records (" KEY=value") give nullopt.
std::optional<KernelLogLine> parse_kernel_log_line(std::string_view line);

struct KernelLogLimits {
  size_t max_line = kMaxLineBytes;  // longer lines are skipped and counted
  // Reading past it is a KernelLogError (a FIFO whose writer sends nothing); the check's --timeout.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // A character device that gives more is not /dev/kmsg (/dev/zero never ends): a KernelLogError. The kernel's
  // buffer is at most 32 MiB (CONFIG_LOG_BUF_SHIFT 25) unless log_buf_len= asks more; 256 MiB leaves room for that.
  size_t max_device_bytes = 256u << 20;
};

struct KernelLogScan {
  size_t bytes = 0;       // bytes read
  size_t long_lines = 0;  // lines longer than max_line, skipped
};

// Calls fn for every line of the log at `path` (a character device such as /dev/kmsg, or a regular file or FIFO),
// streaming in fixed memory; continuation lines are skipped. Throws KernelLogError naming the path and the system
// error when it cannot be opened or read, or a limit was passed.
KernelLogScan scan_kernel_log(const std::string& path, const std::function<void(const KernelLogLine&)>& fn,
                              const KernelLogLimits& limits = {});

// A log held in memory (tests, fuzzing).
class KernelLog {
 public:
  static KernelLog read(const std::string& path);
  static KernelLog from_text(std::string text) {
    KernelLog k;
    k.text_ = std::move(text);
    return k;
  }
  // Calls fn for every line (continuation lines skipped).
  void for_each(const std::function<void(const KernelLogLine&)>& fn) const;
  size_t bytes() const { return text_.size(); }

 private:
  std::string text_;  // records joined by '\n'
};

// Seconds since boot from <procfs>/uptime; nullopt when it cannot be read.
std::optional<double> read_uptime(const std::string& procfs);

}  // namespace gcm::health
