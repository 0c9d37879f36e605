#include "core/file_lines.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace gcm {

namespace {

using Clock = std::chrono::steady_clock;

// Closes the descriptor on every way out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Waits until fd is readable (a FIFO or device without data yet). False when the deadline passed first.
bool wait_readable(int fd, const std::optional<Clock::time_point>& deadline) {
  for (;;) {
    int ms = -1;
    if (deadline) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()).count();
      if (left <= 0) return false;
      ms = static_cast<int>(std::min<int64_t>(left, 60000));
    }
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, ms);
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return true;  // let read() report the error
  }
}

std::string timeout_message(const std::string& path, const FileLineCounts& c) {
  return fmt::format(
      "reading {} did not finish before the check's deadline ({} bytes read); a FIFO or device "
      "without end?",
      path, c.bytes);
}

}  // namespace

FileLineCounts for_each_file_line(const std::string& path, const std::function<void(std::string_view)>& on_line,
                                  const LineReadLimits& limits) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; reads then wait in poll(), bounded by the deadline.
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (f.fd < 0) throw FileReadError(fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  LineSplitter splitter(limits.max_line);
  FileLineCounts c;
  std::string block(1 << 16, '\0');
  for (;;) {
    if (limits.deadline && Clock::now() >= *limits.deadline) throw FileReadError(timeout_message(path, c));
    ssize_t n = ::read(f.fd, block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (!wait_readable(f.fd, limits.deadline)) throw FileReadError(timeout_message(path, c));
      continue;
    }
    if (n < 0) throw FileReadError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
    if (n == 0) break;
    c.bytes += static_cast<size_t>(n);
    if (c.bytes > limits.max_bytes)
      throw FileReadError(fmt::format("{} holds more than {} bytes, the limit for it", path, limits.max_bytes));
    splitter.feed(std::string_view(block.data(), static_cast<size_t>(n)), on_line);
  }
  splitter.finish(on_line);
  c.lines = splitter.lines();
  c.long_lines = splitter.long_lines();
  return c;
}

}  // namespace gcm
