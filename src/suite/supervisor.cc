#include "suite/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace gcm::suite {

namespace {

constexpr size_t kMaxOutput = 64u << 10;

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
double mono_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Running {
  pid_t pid = -1;
  int pidfd = -1;     // readable when the child exits (Linux >= 5.3); -1: poll waitpid every 10 ms instead
  int out_fd = -1;    // the child's stdout+stderr
  int res_fd = -1;    // the child's result lines
  double deadline = 0;
  bool own_timeout = true;  // the deadline is the job's own timeout (else the budget's end)
  bool done = false;
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Reads what is there without blocking; returns false at EOF or error.
bool drain(int fd, std::string& into, size_t limit) {
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<size_t>(n));
      if (into.size() > limit) into.erase(0, into.size() - limit);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

[[noreturn]] void child_setup_and_run(const Job& job, int out_w, int res_w, const std::vector<int>& close_fds) {
  ::setpgid(0, 0);  // its own process group: the kill at the deadline takes the tools it started too
  ::signal(SIGPIPE, SIG_DFL);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  ::dup2(out_w, 1);
  ::dup2(out_w, 2);
  for (int fd : close_fds) ::close(fd);
  if (devnull > 2) ::close(devnull);
  if (out_w > 2) ::close(out_w);
  job.child_main(res_w);
  ::_exit(3);  // child_main must not return; if it does, the result is UNKNOWN
}

}  // namespace

std::vector<JobOutcome> run_jobs(const std::vector<Job>& jobs, double budget_s) {
  std::vector<JobOutcome> out(jobs.size());
  std::vector<Running> run(jobs.size());
  const double t0 = mono_now();
  const double budget_end = t0 + budget_s;
  std::vector<int> parent_fds;  // read ends already open, closed in each later child
  for (size_t i = 0; i < jobs.size(); ++i) {
    int out_p[2], res_p[2];
    if (::pipe2(out_p, O_CLOEXEC) != 0) {
      out[i].start_error = fmt::format("pipe: {}", std::strerror(errno));
      continue;
    }
    if (::pipe2(res_p, O_CLOEXEC) != 0) {
      out[i].start_error = fmt::format("pipe: {}", std::strerror(errno));
      ::close(out_p[0]);
      ::close(out_p[1]);
      continue;
    }
    out[i].start = wall_now();
    pid_t pid = ::fork();
    if (pid == 0) {
      std::vector<int> to_close = parent_fds;
      to_close.push_back(out_p[0]);
      to_close.push_back(res_p[0]);
      child_setup_and_run(jobs[i], out_p[1], res_p[1], to_close);
    }
    ::close(out_p[1]);
    ::close(res_p[1]);
    if (pid < 0) {
      out[i].start_error = fmt::format("fork: {}", std::strerror(errno));
      ::close(out_p[0]);
      ::close(res_p[0]);
      continue;
    }
    ::setpgid(pid, pid);  // also from the parent, so a kill right after fork finds the group
    Running& r = run[i];
    r.pid = pid;
    r.out_fd = out_p[0];
    r.res_fd = res_p[0];
    ::fcntl(r.out_fd, F_SETFL, O_NONBLOCK);
    ::fcntl(r.res_fd, F_SETFL, O_NONBLOCK);
#ifdef SYS_pidfd_open
    r.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#endif
    double own = t0 + jobs[i].timeout_s;
    r.deadline = std::min(own, budget_end);
    r.own_timeout = own <= budget_end;
    out[i].started = true;
    parent_fds.push_back(r.out_fd);
    parent_fds.push_back(r.res_fd);
    if (r.pidfd >= 0) parent_fds.push_back(r.pidfd);
  }

  auto finish = [&](size_t i, int status) {
    Running& r = run[i];
    JobOutcome& o = out[i];
    drain(r.out_fd, o.output, kMaxOutput);
    drain(r.res_fd, o.results, kMaxOutput);
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o.term_signal = WTERMSIG(status);
    o.exited = true;
    o.end = wall_now();
    ::kill(-r.pid, SIGKILL);  // what the check left behind in its group (a tool still running) goes too
    close_fd(r.pidfd);
    close_fd(r.out_fd);
    close_fd(r.res_fd);
    r.done = true;
  };

  for (;;) {
    std::vector<pollfd> fds;
    std::vector<size_t> owner;
    double next = INFINITY;
    bool need_tick = false;
    for (size_t i = 0; i < run.size(); ++i) {
      Running& r = run[i];
      if (r.pid < 0 || r.done) continue;
      next = std::min(next, r.deadline);
      if (r.pidfd >= 0) {
        fds.push_back({r.pidfd, POLLIN, 0});
        owner.push_back(i);
      } else {
        need_tick = true;
      }
      if (r.out_fd >= 0) {
        fds.push_back({r.out_fd, POLLIN, 0});
        owner.push_back(i);
      }
      if (r.res_fd >= 0) {
        fds.push_back({r.res_fd, POLLIN, 0});
        owner.push_back(i);
      }
    }
    if (std::isinf(next)) break;  // nothing running
    double wait_s = std::max(0.0, next - mono_now());
    if (need_tick) wait_s = std::min(wait_s, 0.01);
    int ms = static_cast<int>(std::ceil(wait_s * 1000));
    int n = ::poll(fds.data(), fds.size(), ms);
    if (n < 0 && errno != EINTR) break;
    for (size_t k = 0; n > 0 && k < fds.size(); ++k) {
      if (!fds[k].revents) continue;
      Running& r = run[owner[k]];
      if (r.done) continue;
      JobOutcome& o = out[owner[k]];
      if (fds[k].fd == r.out_fd) {
        if (!drain(r.out_fd, o.output, kMaxOutput)) close_fd(r.out_fd);
      } else if (fds[k].fd == r.res_fd) {
        if (!drain(r.res_fd, o.results, kMaxOutput)) close_fd(r.res_fd);
      }
    }
    // Reap whoever exited (pidfd readable, or the 10 ms tick without pidfd).
    for (size_t i = 0; i < run.size(); ++i) {
      Running& r = run[i];
      if (r.pid < 0 || r.done) continue;
      int status = 0;
      pid_t w = ::waitpid(r.pid, &status, WNOHANG);
      if (w == r.pid) finish(i, status);
    }
    double now = mono_now();
    for (size_t i = 0; i < run.size(); ++i) {
      Running& r = run[i];
      if (r.pid < 0 || r.done || now < r.deadline) continue;
      ::kill(-r.pid, SIGKILL);
      ::kill(r.pid, SIGKILL);
      JobOutcome& o = out[i];
      drain(r.out_fd, o.output, kMaxOutput);
      drain(r.res_fd, o.results, kMaxOutput);
      o.timed_out = r.own_timeout;
      o.budget_exhausted = !r.own_timeout;
      o.end = wall_now();
      // Reap it if the kill took effect at once; a child stuck in the kernel (D state) is not waited for.
      int status = 0;
      for (int k = 0; k < 5 && ::waitpid(r.pid, &status, WNOHANG) == 0; ++k) ::usleep(1000);
      close_fd(r.pidfd);
      close_fd(r.out_fd);
      close_fd(r.res_fd);
      r.done = true;
    }
  }
  return out;
}

}  // namespace gcm::suite
