#include "health/kernel_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "core/file_lines.h"

namespace gcm::health {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// "6,1234,5678901,-;" → the message after ';' and the timestamp (microseconds) of the third field.
std::optional<KernelLogLine> parse_kmsg_record(std::string_view line) {
  size_t semi = line.find(';');
  if (semi == std::string_view::npos) return std::nullopt;
  std::string_view head = line.substr(0, semi);
  size_t c1 = head.find(',');
  if (c1 == std::string_view::npos || !all_digits(head.substr(0, c1))) return std::nullopt;
  size_t c2 = head.find(',', c1 + 1);
  if (c2 == std::string_view::npos || !all_digits(head.substr(c1 + 1, c2 - c1 - 1))) return std::nullopt;
  size_t c3 = head.find(',', c2 + 1);
  std::string_view ts = head.substr(c2 + 1, c3 == std::string_view::npos ? std::string_view::npos : c3 - c2 - 1);
  if (!all_digits(ts)) return std::nullopt;
  double usec = 0;
  for (char c : ts) usec = usec * 10 + (c - '0');
  return KernelLogLine{line.substr(semi + 1), usec / 1e6};
}

// "[ 5678.901234] msg" → msg and 5678.901234. Other bracketed prefixes (dmesg -T dates) keep no uptime.
std::optional<KernelLogLine> parse_dmesg_line(std::string_view line) {
  if (line.empty() || line[0] != '[') return std::nullopt;
  size_t close = line.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view inner = line.substr(1, close - 1);
  while (!inner.empty() && inner[0] == ' ') inner.remove_prefix(1);
  std::string_view rest = line.substr(close + 1);
  if (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
  size_t dot = inner.find('.');
  if (dot != std::string_view::npos && all_digits(inner.substr(0, dot)) && all_digits(inner.substr(dot + 1))) {
    double v = 0;
    for (char c : inner.substr(0, dot)) v = v * 10 + (c - '0');
    double scale = 0.1;
    for (char c : inner.substr(dot + 1)) {
      v += (c - '0') * scale;
      scale /= 10;
    }
    return KernelLogLine{rest, v};
  }
  return KernelLogLine{rest, std::nullopt};
}

}  // namespace

std::optional<KernelLogLine> parse_kernel_log_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!line.empty() && line[0] == ' ') return std::nullopt;  // a /dev/kmsg continuation (" SUBSYSTEM=pci")
  if (!line.empty() && line[0] >= '0' && line[0] <= '9')
    if (auto r = parse_kmsg_record(line)) return r;
  if (auto r = parse_dmesg_line(line)) return r;
  return KernelLogLine{line, std::nullopt};
}

namespace {

std::string deadline_message(const std::string& path, size_t bytes) {
  return fmt::format(
      "reading the kernel log {} did not finish before the check's deadline (--timeout; {} bytes "
      "read)",
      path, bytes);
}

// /dev/kmsg: each read() returns one whole record; EAGAIN means we reached the end; EPIPE means records were
// overwritten while we read (go on with the next, as dmesg does). A device that never says EAGAIN (/dev/zero) is
// stopped by the byte cap or the deadline.
KernelLogScan scan_character_device(int fd, const std::string& path,
                                    const std::function<void(const KernelLogLine&)>& fn,
                                    const KernelLogLimits& limits) {
  KernelLogScan scan;
  LineSplitter splitter(limits.max_line);
  auto deliver = [&](std::string_view line) {
    if (auto l = parse_kernel_log_line(line)) fn(*l);
  };
  char buf[8192];
  for (;;) {
    if (limits.deadline && std::chrono::steady_clock::now() >= *limits.deadline)
      throw KernelLogError(deadline_message(path, scan.bytes));
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      scan.bytes += static_cast<size_t>(n);
      if (scan.bytes > limits.max_device_bytes)
        throw KernelLogError(
            fmt::format("{} gave more than {} bytes without an end: not a kernel ring buffer "
                        "(/dev/kmsg holds at most the kernel's log_buf_len)",
                        path, limits.max_device_bytes));
      // A record is one read: end it even when it carries no "\n" of its own.
      splitter.feed(std::string_view(buf, static_cast<size_t>(n)), deliver);
      splitter.finish(deliver);
      continue;
    }
    if (n < 0 && (errno == EINTR || errno == EPIPE)) continue;
    if (n == 0 || errno == EAGAIN) break;
    throw KernelLogError(fmt::format("cannot read the kernel log {}: {}", path, std::strerror(errno)));
  }
  scan.long_lines = splitter.long_lines();
  return scan;
}

}  // namespace

KernelLogScan scan_kernel_log(const std::string& path, const std::function<void(const KernelLogLine&)>& fn,
                              const KernelLogLimits& limits) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw KernelLogError(fmt::format("cannot open the kernel log {}: {}", path, std::strerror(errno)));
  struct stat st {};
  ::fstat(fd, &st);
  if (S_ISCHR(st.st_mode)) {
    try {
      KernelLogScan scan = scan_character_device(fd, path, fn, limits);
      ::close(fd);
      return scan;
    } catch (...) {
      ::close(fd);
      throw;
    }
  }
  ::close(fd);
  // Files, FIFOs and the rest: lines, bounded by the same deadline (a FIFO's writer may never send or close).
  LineReadLimits line_limits;
  line_limits.max_line = limits.max_line;
  line_limits.deadline = limits.deadline;
  KernelLogScan scan;
  try {
    FileLineCounts c = for_each_file_line(
        path,
        [&](std::string_view line) {
          if (auto l = parse_kernel_log_line(line)) fn(*l);
        },
        line_limits);
    scan.bytes = c.bytes;
    scan.long_lines = c.long_lines;
  } catch (const FileReadError& e) {
    throw KernelLogError(fmt::format("cannot read the kernel log: {}", e.what()));
  }
  return scan;
}

KernelLog KernelLog::read(const std::string& path) {
  KernelLog log;
  scan_kernel_log(path, [&](const KernelLogLine& l) {
    log.text_.append(l.message);
    log.text_.push_back('\n');
  });
  return log;
}

void KernelLog::for_each(const std::function<void(const KernelLogLine&)>& fn) const {
  std::string_view rest(text_);
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    if (auto l = parse_kernel_log_line(line)) fn(*l);
  }
}

std::optional<double> read_uptime(const std::string& procfs) {
  std::ifstream in(procfs + "/uptime");
  double v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

}  // namespace gcm::health
