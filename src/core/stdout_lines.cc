#include "core/stdout_lines.h"

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <mutex>
#include <string>

#include <fmt/format.h>

namespace gcm::stdout_lines {
namespace {

constexpr size_t kMaxHeldBytes = 4u << 20;

struct Shared {
  std::mutex mu;
  bool open = false;
  std::string held;
  size_t dropped = 0;
};

Shared& shared() {
  static Shared s;
  return s;
}

// The log has nowhere to report its own write errors (stdout closed, a full disk): they are ignored, as spdlog's
// stdout sink ignores them.
void write_all(std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(STDOUT_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

void open_line() {
  Shared& s = shared();
  std::lock_guard<std::mutex> lock(s.mu);  // a log line being written now is finished first
  s.open = true;
}

void close_line() {
  Shared& s = shared();
  std::lock_guard<std::mutex> lock(s.mu);
  s.open = false;
  write_all(s.held);
  if (s.dropped > 0)
    write_all(fmt::format("({} log line(s) not shown: more than {} MiB of log came while one stdout line was open)\n",
                          s.dropped, kMaxHeldBytes >> 20));
  s.held.clear();
  s.held.shrink_to_fit();
  s.dropped = 0;
}

void write_log_line(std::string_view line) {
  Shared& s = shared();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.open) {
    write_all(line);
  } else if (s.held.size() + line.size() <= kMaxHeldBytes) {
    s.held.append(line);
  } else {
    ++s.dropped;
  }
}

}  // namespace gcm::stdout_lines
