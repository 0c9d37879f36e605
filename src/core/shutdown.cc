#include "core/shutdown.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace gcm {

namespace {

std::atomic<bool> g_stop{false};
int g_pipe[2] = {-1, -1};

void on_signal(int) {
  g_stop.store(true);
  if (g_pipe[1] >= 0) {
    char c = 1;
    [[maybe_unused]] auto n = ::write(g_pipe[1], &c, 1);
  }
}

void ensure_pipe() {
  if (g_pipe[0] < 0) {
    if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) g_pipe[0] = g_pipe[1] = -1;
  }
}

}  // namespace

void install_shutdown_handlers() {
  ensure_pipe();
  struct sigaction sa = {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);  // a closed stdout or socket is an error to report, not a silent death
}

bool shutdown_requested() { return g_stop.load(); }

void request_shutdown() { on_signal(0); }

void reset_shutdown() {
  g_stop.store(false);
  if (g_pipe[0] >= 0) {
    char buf[64];
    while (::read(g_pipe[0], buf, sizeof buf) > 0) {
    }
  }
}

bool sleep_unless_shutdown(std::chrono::duration<double> d) {
  ensure_pipe();
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(d);
  while (!g_stop.load()) {
    // Nanoseconds (ppoll), not poll's milliseconds: a sub-millisecond sleep must not round down to no sleep.
    auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - Clock::now()).count();
    if (left <= 0) return true;
    pollfd p{g_pipe[0], POLLIN, 0};
    timespec ts{static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
    int rc = ::ppoll(&p, 1, &ts, nullptr);
    if (rc < 0 && errno != EINTR) return !g_stop.load();
  }
  return false;
}

}  // namespace gcm
