// Reads the kernel ring buffer the way `dmesg` does, without spawning it: /dev/kmsg (non-blocking reads of one record
// each until EAGAIN), or a file holding /dev/kmsg records, `dmesg` output or syslog lines (fixtures, saved logs).
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gcm::health {

struct KernelLogError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct KernelLogLine {
  std::string_view message;          // the text after the record header or "[timestamp] " prefix
  std::optional<double> uptime_s;    // seconds since boot when the line carries a timestamp
};

// One line of any of the accepted forms: "6,1234,5678901,-;msg" (/dev/kmsg), "[ 5678.901234] msg" (dmesg),
// anything else as it is (syslog). Continuation lines of /dev/kmsg records (" KEY=value") give nullopt.
std::optional<KernelLogLine> parse_kernel_log_line(std::string_view line);

// Calls fn for every line of the log at `path` (a character device such as /dev/kmsg, or a regular file), streaming
// in fixed memory; continuation lines are skipped. Throws KernelLogError naming the path and the system error when
// it cannot be opened or read. Returns the bytes read.
size_t scan_kernel_log(const std::string& path, const std::function<void(const KernelLogLine&)>& fn);

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
