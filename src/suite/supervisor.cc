#include "suite/supervisor.h"
#include "core/clock.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gcm::suite {

namespace {

constexpr size_t kMaxOutput = 64u << 10;

double mono_now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Reads what is there without blocking; returns false at EOF or error.
bool drain(int fd, std::string& into, size_t limit) {
  if (fd < 0) return false;
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

// SIGKILLs every process of session `sid`. A check's child starts a session, and the tools its checks run
// (core/subprocess) each get a process group of their own in it, so that a tool's timeout kills the tool's own
// children; killing only the child's process group would leave those tools running after the check was killed.
// Scanning /proc costs a few milliseconds, so it is done only for a child killed at its deadline.
void kill_session(pid_t sid) {
  for (int pass = 0; pass < 2; ++pass) {  // twice: a tool may have forked while the first pass ran
    DIR* d = ::opendir("/proc");
    if (!d) return;
    while (dirent* e = ::readdir(d)) {
      char* end = nullptr;
      long pid = std::strtol(e->d_name, &end, 10);
      if (*end || pid <= 0 || pid == ::getpid()) continue;
      char path[64];
      std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
      int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      char buf[512];
      ssize_t n = ::read(fd, buf, sizeof buf - 1);
      ::close(fd);
      if (n <= 0) continue;
      buf[n] = 0;
      // After the command name in parentheses (which may hold anything): state ppid pgrp session.
      const char* rp = std::strrchr(buf, ')');
      char state = 0;
      long ppid = 0, pgrp = 0, session = 0;
      if (rp && std::sscanf(rp + 1, " %c %ld %ld %ld", &state, &ppid, &pgrp, &session) == 4 && session == sid)
        ::kill(static_cast<pid_t>(pid), SIGKILL);
    }
    ::closedir(d);
  }
}

// One check being watched: a single job, or one part of a group.
struct Part {
  JobOutcome* out = nullptr;
  int out_fd = -1;  // its output (a single job: the process' stdout+stderr)
  int res_fd = -1;  // its result lines
  double deadline = 0;
  bool own_timeout = true;  // the deadline is its own timeout (else the budget's end)
  bool closed = false;      // a part of a group that closed its result pipe: no deadline any more
};

// One child process.
struct Proc {
  bool group = false;
  pid_t pid = -1;
  int pidfd = -1;        // readable when the child exits (Linux >= 5.3); -1: poll waitpid every 10 ms instead
  int proc_out_fd = -1;  // a group's own stdout+stderr
  std::string proc_output;
  double proc_deadline = 0;  // a group whose parts all closed but which does not exit is killed then
  std::vector<Part> parts;
  bool done = false;
};

struct Pipe {
  int r = -1, w = -1;
  bool open() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return false;
    r = p[0];
    w = p[1];
    return true;
  }
  void close_both() {
    close_fd(r);
    close_fd(w);
  }
};

// In the child: a session of its own (also its own process group; see kill_session), stdin from /dev/null,
// stdout and stderr to `out_w`, and none of the parent's read ends.
void child_setup(int out_w, const std::vector<int>& close_fds) {
  ::setsid();
  ::signal(SIGPIPE, SIG_DFL);
  int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  ::dup2(out_w, 1);
  ::dup2(out_w, 2);
  for (int fd : close_fds) ::close(fd);
  if (devnull > 2) ::close(devnull);
  if (out_w > 2) ::close(out_w);
}

class Supervisor {
 public:
  Supervisor(const std::vector<Job>& jobs, const std::vector<GroupJob>& groups, double budget_s) {
    t0_ = mono_now();
    budget_end_ = t0_ + budget_s;
    result_.jobs.resize(jobs.size());
    result_.groups.resize(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) result_.groups[g].resize(groups[g].timeouts_s.size());
    procs_.reserve(jobs.size() + groups.size());
    for (size_t i = 0; i < jobs.size(); ++i) start_job(jobs[i], result_.jobs[i]);
    for (size_t g = 0; g < groups.size(); ++g) start_group(groups[g], result_.groups[g]);
  }

  RunResult run() {
    while (step()) {
    }
    return std::move(result_);
  }

 private:
  // Deadline of a check started now with this timeout: its own, or the budget's end when that comes first.
  void set_deadline(Part& p, double timeout_s) const {
    double own = t0_ + timeout_s;
    p.deadline = std::min(own, budget_end_);
    p.own_timeout = own <= budget_end_;
  }

  void after_fork(Proc& pr, pid_t pid) {
    // No setpgid(pid, pid) from here: it would make the child a group leader, and its setsid() would then fail.
    // A kill before the child's setsid() still reaches it by its pid (kill_overrun).
    pr.pid = pid;
#ifdef SYS_pidfd_open
    pr.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#endif
    for (int* fd : {&pr.proc_out_fd, &pr.pidfd}) remember(*fd);
    for (auto& p : pr.parts) {
      ::fcntl(p.out_fd, F_SETFL, O_NONBLOCK);
      ::fcntl(p.res_fd, F_SETFL, O_NONBLOCK);
      remember(p.out_fd);
      remember(p.res_fd);
      p.out->started = true;
    }
    if (pr.proc_out_fd >= 0) ::fcntl(pr.proc_out_fd, F_SETFL, O_NONBLOCK);
    procs_.push_back(std::move(pr));
  }

  void remember(int fd) {
    if (fd >= 0) parent_fds_.push_back(fd);
  }

  // posix_spawn rather than core/subprocess: the child joins this poll loop (see supervisor.h).
  void spawn_job(const Job& job, JobOutcome& out);

  void start_job(const Job& job, JobOutcome& out);

  void start_group(const GroupJob& g, std::vector<JobOutcome>& outs);

  void drain_all(Proc& pr) {
    drain(pr.proc_out_fd, pr.proc_output, kMaxOutput);
    for (auto& p : pr.parts) {
      drain(p.out_fd, p.out->output, kMaxOutput);
      drain(p.res_fd, p.out->results, kMaxOutput);
    }
  }

  void close_all(Proc& pr) {
    close_fd(pr.pidfd);
    close_fd(pr.proc_out_fd);
    for (auto& p : pr.parts) {
      close_fd(p.out_fd);
      close_fd(p.res_fd);
    }
    if (pr.group)
      for (auto& p : pr.parts) p.out->process_output = pr.proc_output;
    pr.done = true;
  }

  void finish(Proc& pr, int status) {
    drain_all(pr);
    double end = unix_seconds_now();
    for (auto& p : pr.parts) {
      if (WIFEXITED(status)) p.out->exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) p.out->term_signal = WTERMSIG(status);
      p.out->exited = true;
      if (!p.closed) p.out->end = end;
    }
    close_all(pr);
  }

  // Kills an overrunning process; `overdue` says which of its parts passed their deadline.
  void kill_overrun(Proc& pr, double now) {
    ::kill(-pr.pid, SIGKILL);
    ::kill(pr.pid, SIGKILL);
    kill_session(pr.pid);
    drain_all(pr);
    double end = unix_seconds_now();
    for (auto& p : pr.parts) {
      if (p.closed) continue;
      if (now >= p.deadline) {
        p.out->timed_out = p.own_timeout;
        p.out->budget_exhausted = !p.own_timeout;
      } else {
        p.out->interrupted = true;
      }
      p.out->end = end;
    }
    // Reap it if the kill took effect at once; a child stuck in the kernel (D state) is not waited for.
    int status = 0;
    for (int k = 0; k < 5 && ::waitpid(pr.pid, &status, WNOHANG) == 0; ++k) ::usleep(1000);
    close_all(pr);
  }

  // One round of waiting; false when nothing is running any more.
  bool step();

  void read_ready(const std::vector<pollfd>& fds);

  double t0_ = 0, budget_end_ = 0;
  RunResult result_;
  std::vector<Proc> procs_;
  std::vector<int> parent_fds_;  // read ends already open, closed in each later child
};

void Supervisor::spawn_job(const Job& job, JobOutcome& out) {
  Pipe o;
  if (!o.open()) {
    out.start_error = fmt::format("pipe: {}", std::strerror(errno));
    return;
  }
  std::vector<char*> argv;
  for (const auto& a : job.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, o.w, 1);
  posix_spawn_file_actions_adddup2(&fa, o.w, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t def, none;
  sigemptyset(&def);
  sigaddset(&def, SIGPIPE);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setsigmask(&attr, &none);
  // A session of its own, as a forked child gets (see kill_session). Every other fd here is O_CLOEXEC.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  out.start = unix_seconds_now();
  pid_t pid = -1;
  int rc = job.argv[0].find('/') != std::string::npos ? posix_spawn(&pid, argv[0], &fa, &attr, argv.data(), environ)
                                                      : posix_spawnp(&pid, argv[0], &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close_fd(o.w);
  if (rc != 0) {
    close_fd(o.r);
    out.started = out.exited = true;
    out.exit_code = 127;
    out.results =
        nlohmann::json{{"start_error", fmt::format("cannot run '{}': {}", job.argv[0], std::strerror(rc))}}.dump(
            -1, ' ', false, nlohmann::json::error_handler_t::replace) +
        "\n";
    out.end = unix_seconds_now();
    return;
  }
  Proc pr;
  Part p;
  p.out = &out;
  p.out_fd = o.r;
  set_deadline(p, job.timeout_s);
  pr.parts.push_back(p);
  pr.proc_deadline = p.deadline;
  after_fork(pr, pid);
}

void Supervisor::start_job(const Job& job, JobOutcome& out) {
  if (!job.argv.empty()) return spawn_job(job, out);
  Pipe o, r;
  if (!o.open() || !r.open()) {
    out.start_error = fmt::format("pipe: {}", std::strerror(errno));
    o.close_both();
    r.close_both();
    return;
  }
  out.start = unix_seconds_now();
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<int> to_close = parent_fds_;
    to_close.push_back(o.r);
    to_close.push_back(r.r);
    child_setup(o.w, to_close);
    job.child_main(r.w);
    ::_exit(3);  // child_main must not return; if it does, the result is UNKNOWN
  }
  close_fd(o.w);
  close_fd(r.w);
  if (pid < 0) {
    out.start_error = fmt::format("fork: {}", std::strerror(errno));
    o.close_both();
    r.close_both();
    return;
  }
  Proc pr;
  Part p;
  p.out = &out;
  p.out_fd = o.r;
  p.res_fd = r.r;
  set_deadline(p, job.timeout_s);
  pr.parts.push_back(p);
  pr.proc_deadline = p.deadline;
  after_fork(pr, pid);
}

void Supervisor::start_group(const GroupJob& g, std::vector<JobOutcome>& outs) {
  Pipe proc_out;
  std::vector<Pipe> o(outs.size()), r(outs.size());
  // Every part fails to start with the same error; every pipe opened so far is closed.
  auto fail = [&](const char* what) {
    std::string err = fmt::format("{}: {}", what, std::strerror(errno));
    for (auto& out : outs) out.start_error = err;
    proc_out.close_both();
    for (size_t i = 0; i < outs.size(); ++i) {
      o[i].close_both();
      r[i].close_both();
    }
  };
  bool ok = proc_out.open();
  for (size_t i = 0; ok && i < outs.size(); ++i) ok = o[i].open() && r[i].open();
  if (!ok) return fail("pipe");
  double start = unix_seconds_now();
  for (auto& out : outs) out.start = start;
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<int> to_close = parent_fds_;
    to_close.push_back(proc_out.r);
    std::vector<PartFds> fds;
    for (size_t i = 0; i < outs.size(); ++i) {
      to_close.push_back(o[i].r);
      to_close.push_back(r[i].r);
      fds.push_back({o[i].w, r[i].w});
    }
    child_setup(proc_out.w, to_close);
    g.child_main(fds);
    ::_exit(3);
  }
  close_fd(proc_out.w);
  for (size_t i = 0; i < outs.size(); ++i) {
    close_fd(o[i].w);
    close_fd(r[i].w);
  }
  if (pid < 0) return fail("fork");
  Proc pr;
  pr.group = true;
  pr.proc_out_fd = proc_out.r;
  for (size_t i = 0; i < outs.size(); ++i) {
    Part p;
    p.out = &outs[i];
    p.out_fd = o[i].r;
    p.res_fd = r[i].r;
    set_deadline(p, g.timeouts_s[i]);
    pr.proc_deadline = std::max(pr.proc_deadline, p.deadline);
    pr.parts.push_back(p);
  }
  after_fork(pr, pid);
}

bool Supervisor::step() {
  std::vector<pollfd> fds;
  double next = INFINITY;
  bool need_tick = false;
  for (auto& pr : procs_) {
    if (pr.done) continue;
    bool open_part = false;
    for (auto& p : pr.parts) {
      if (p.closed) continue;
      open_part = true;
      next = std::min(next, p.deadline);
    }
    if (!open_part) next = std::min(next, pr.proc_deadline);
    if (pr.pidfd >= 0)
      fds.push_back({pr.pidfd, POLLIN, 0});
    else
      need_tick = true;
    if (pr.proc_out_fd >= 0) fds.push_back({pr.proc_out_fd, POLLIN, 0});
    for (auto& p : pr.parts) {
      if (p.out_fd >= 0) fds.push_back({p.out_fd, POLLIN, 0});
      if (p.res_fd >= 0) fds.push_back({p.res_fd, POLLIN, 0});
    }
  }
  if (std::isinf(next)) return false;  // nothing running
  double wait_s = std::max(0.0, next - mono_now());
  if (need_tick) wait_s = std::min(wait_s, 0.01);
  int n = ::poll(fds.data(), fds.size(), static_cast<int>(std::ceil(wait_s * 1000)));
  if (n < 0 && errno != EINTR) return false;
  if (n > 0) read_ready(fds);
  // Reap whoever exited (pidfd readable, or the 10 ms tick without pidfd). Its process group is killed before
  // it is reaped: until then its pid, and so its group's id, cannot be given to another process.
  for (auto& pr : procs_) {
    if (pr.done) continue;
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(pr.pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != pr.pid)
      continue;
    ::kill(-pr.pid, SIGKILL);  // what the checks left behind in its group (a tool still running) goes too
    int status = 0;
    if (::waitpid(pr.pid, &status, 0) == pr.pid) finish(pr, status);
  }
  double now = mono_now();
  for (auto& pr : procs_) {
    if (pr.done) continue;
    bool overdue = false, open_part = false;
    for (auto& p : pr.parts) {
      if (p.closed) continue;
      open_part = true;
      overdue = overdue || now >= p.deadline;
    }
    if (overdue || (!open_part && now >= pr.proc_deadline)) kill_overrun(pr, now);
  }
  return true;
}

void Supervisor::read_ready(const std::vector<pollfd>& fds) {
  for (const auto& f : fds) {
    if (!f.revents) continue;
    for (auto& pr : procs_) {
      if (pr.done) continue;
      if (f.fd == pr.proc_out_fd) {
        if (!drain(pr.proc_out_fd, pr.proc_output, kMaxOutput)) close_fd(pr.proc_out_fd);
        continue;
      }
      for (auto& p : pr.parts) {
        if (f.fd == p.out_fd) {
          if (!drain(p.out_fd, p.out->output, kMaxOutput)) close_fd(p.out_fd);
        } else if (f.fd == p.res_fd) {
          if (drain(p.res_fd, p.out->results, kMaxOutput)) continue;
          close_fd(p.res_fd);
          // A single job's result pipe closes at exec; only a group's part says "done" this way.
          if (pr.group) {
            p.closed = true;
            p.out->end = unix_seconds_now();
          }
        }
      }
    }
  }
}

}  // namespace

RunResult run_all(const std::vector<Job>& jobs, const std::vector<GroupJob>& groups, double budget_s) {
  return Supervisor(jobs, groups, budget_s).run();
}

std::vector<JobOutcome> run_jobs(const std::vector<Job>& jobs, double budget_s) {
  return run_all(jobs, {}, budget_s).jobs;
}

}  // namespace gcm::suite
