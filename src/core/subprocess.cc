#include "core/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace gcm {

namespace {

using Clock = std::chrono::steady_clock;

std::string current_path() {
  const char* p = std::getenv("PATH");
  return p ? p : "";
}

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (pipe2(fd, O_CLOEXEC) != 0) throw CommandError(fmt::format("pipe2 failed: {}", std::strerror(errno)));
  }
  ~Pipe() { close_both(); }
  void close_read() { close_fd(fd[0]); }
  void close_write() { close_fd(fd[1]); }
  void close_both() {
    close_read();
    close_write();
  }
  static void close_fd(int& f) {
    if (f >= 0) ::close(f);
    f = -1;
  }
};

std::vector<std::string> build_env(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    std::string_view key = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const auto& x : extra) {
      if (std::string_view(x).substr(0, x.find('=')) == key) replaced = true;
    }
    if (!replaced) env.emplace_back(kv);
  }
  for (const auto& x : extra)
    if (x.find('=') != std::string::npos) env.push_back(x);
  return env;
}

// Points `target` (0, 1 or 2 in the child) at `fd`. Only async-signal-safe calls: it runs between fork and exec.
void redirect_in_child(int fd, int target) {
  if (fd == target)
    ::fcntl(fd, F_SETFD, 0);  // dup2 onto itself would leave an O_CLOEXEC flag, and the stream closed at exec
  else
    ::dup2(fd, target);
}

// A started child (in a process group of its own unless the spec says otherwise), with pipes for the streams that
// are not sent elsewhere.
class Child {
 public:
  explicit Child(const CommandSpec& spec) : spec_(spec) {
    if (spec.argv.empty()) throw CommandError("empty command line");
    std::string exe = spec.argv[0].find('/') == std::string::npos ? find_executable(spec.argv[0]) : spec.argv[0];
    if (exe.empty() || ::access(exe.c_str(), X_OK) != 0) {
      throw CommandError(fmt::format("could not find executable '{}' (command: {}; PATH={})", spec.argv[0],
                                     command_line(spec.argv), current_path()));
    }
    std::vector<char*> argv;
    for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<std::string> env_storage = build_env(spec.extra_env);
    std::vector<char*> envp;
    for (auto& e : env_storage) envp.push_back(e.data());
    envp.push_back(nullptr);

    std::optional<Pipe> in, out, err;
    if (spec.stdin_data) in.emplace();
    if (!spec.stdout_to) out.emplace();
    if (!spec.stderr_to) err.emplace();
    Pipe exec_err;
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) throw CommandError(fmt::format("fork failed for {}: {}", command_line(spec.argv), strerror(errno)));
    if (pid_ == 0) {
      // Child: only async-signal-safe calls from here on.
      if (spec.die_with_parent) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(127);  // the parent died before the prctl: nobody waits for this child
      }
      if (spec.own_process_group) ::setpgid(0, 0);
      if (in) {
        ::dup2(in->fd[0], 0);
      } else if (spec.stdin_from) {
        redirect_in_child(*spec.stdin_from, 0);
      } else {
        int devnull = ::open("/dev/null", O_RDONLY);
        ::dup2(devnull, 0);
      }
      redirect_in_child(out ? out->fd[1] : *spec.stdout_to, 1);
      redirect_in_child(err ? err->fd[1] : *spec.stderr_to, 2);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      // Ignored signals stay ignored across exec; the command must die of a broken pipe and of a timeout's SIGTERM.
      for (int sig : {SIGPIPE, SIGTERM, SIGINT}) ::signal(sig, SIG_DFL);
      ::execve(exe.c_str(), argv.data(), envp.data());
      int e = errno;
      [[maybe_unused]] auto n = ::write(exec_err.fd[1], &e, sizeof e);
      ::_exit(127);
    }
    if (spec.own_process_group) ::setpgid(pid_, pid_);  // also from the parent, so the group exists before any kill
    exec_err.close_write();
    int child_errno = 0;
    ssize_t n;
    do {
      n = ::read(exec_err.fd[0], &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    if (n == sizeof child_errno) {
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
      throw CommandError(fmt::format("could not execute '{}': {} (command: {}; PATH={})", exe,
                                     std::strerror(child_errno), command_line(spec.argv), current_path()));
    }
    stdin_fd_ = take_end(in, 1);
    stdout_fd_ = take_end(out, 0);
    stderr_fd_ = take_end(err, 0);
    for (int fd : {stdin_fd_, stdout_fd_, stderr_fd_}) {
      if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    deadline_ = Clock::now() + spec.timeout;
  }

  ~Child() {
    if (pid_ > 0 && !reaped_) {  // an exception left the child running
      signal_child(SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    Pipe::close_fd(stdin_fd_);
    Pipe::close_fd(stdout_fd_);
    Pipe::close_fd(stderr_fd_);
  }

  // Pumps the pipes until both outputs reach EOF or the deadline passes (or a stop); stdout chunks go to on_out.
  // Then waits for the child's exit, still bounded by the deadline.
  template <typename OnOut>
  void pump(CommandResult& r, OnOut&& on_out) {
    char buf[65536];
    size_t stdin_off = 0;
    while (stdout_fd_ >= 0 || stderr_fd_ >= 0) {
      if (ended_early(r)) break;
      pollfd fds[3];
      int nfds = 0;
      int idx_out = -1, idx_err = -1, idx_in = -1;
      if (stdout_fd_ >= 0) {
        idx_out = nfds;
        fds[nfds++] = {stdout_fd_, POLLIN, 0};
      }
      if (stderr_fd_ >= 0) {
        idx_err = nfds;
        fds[nfds++] = {stderr_fd_, POLLIN, 0};
      }
      if (stdin_fd_ >= 0) {
        idx_in = nfds;
        fds[nfds++] = {stdin_fd_, POLLOUT, 0};
      }
      int rc = ::poll(fds, static_cast<nfds_t>(nfds), wait_ms());
      if (rc < 0) {
        if (errno == EINTR) continue;
        throw CommandError(fmt::format("poll failed: {}", std::strerror(errno)));
      }
      if (idx_in >= 0 && fds[idx_in].revents) {
        const std::string& data = *spec_.stdin_data;
        ssize_t w = ::write(stdin_fd_, data.data() + stdin_off, data.size() - stdin_off);
        if (w > 0) stdin_off += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) stdin_off = data.size();  // EPIPE: the child stopped reading
        if (stdin_off >= data.size()) Pipe::close_fd(stdin_fd_);
      }
      if (idx_out >= 0 && fds[idx_out].revents) {
        ssize_t n = ::read(stdout_fd_, buf, sizeof buf);
        if (n > 0)
          on_out(std::string_view(buf, static_cast<size_t>(n)));
        else if (n == 0 || (errno != EAGAIN && errno != EINTR))
          Pipe::close_fd(stdout_fd_);
      }
      if (idx_err >= 0 && fds[idx_err].revents) {
        ssize_t n = ::read(stderr_fd_, buf, sizeof buf);
        if (n > 0) {
          r.err.append(buf, static_cast<size_t>(n));
          if (r.err.size() > spec_.max_stderr) r.err.erase(0, r.err.size() - spec_.max_stderr);
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
          Pipe::close_fd(stderr_fd_);
        }
      }
    }
    Pipe::close_fd(stdin_fd_);
    reap(r);
  }

 private:
  static int take_end(std::optional<Pipe>& p, int end) {
    if (!p) return -1;
    int fd = p->fd[end];
    p->fd[end] = -1;
    p->close_both();
    return fd;
  }

  // The child, or its whole group when it has one of its own (what it started goes with it).
  void signal_child(int sig) const { ::kill(spec_.own_process_group ? -pid_ : pid_, sig); }

  bool try_reap() {
    if (reaped_) return true;
    pid_t w = ::waitpid(pid_, &status_, WNOHANG);
    if (w == pid_ || (w < 0 && errno != EINTR)) reaped_ = true;
    return reaped_;
  }

  // How long one poll may wait: until the deadline, and no longer than the period a stop is looked for.
  int wait_ms() const {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count() + 1;
    if (spec_.stop_requested) left = std::min<int64_t>(left, 50);
    return static_cast<int>(std::max<int64_t>(left, 0));
  }

  // At the deadline or on a stop: ends the child (SIGTERM and a grace first, when asked) and says so.
  bool ended_early(CommandResult& r) {
    if (r.timed_out || r.stopped) return true;
    if (Clock::now() >= deadline_)
      r.timed_out = true;
    else if (spec_.stop_requested && spec_.stop_requested())
      r.stopped = true;
    else
      return false;
    if (spec_.term_grace.count() > 0) {
      signal_child(SIGTERM);
      auto kill_at = Clock::now() + spec_.term_grace;
      while (!try_reap() && Clock::now() < kill_at) ::usleep(20000);
    }
    if (!reaped_ || spec_.own_process_group) signal_child(SIGKILL);  // a reaped child's pid may be someone else's
    return true;
  }

  void reap(CommandResult& r) {
    // The outputs are closed (or were never ours); the child normally exits at once. Bound the wait by the deadline
    // anyway, looking for a stop meanwhile; the pause grows so that a long wait costs no CPU.
    auto pause = std::chrono::microseconds(1000);
    while (!try_reap()) {
      if (ended_early(r)) {
        if (!reaped_ && ::waitpid(pid_, &status_, 0) == pid_) reaped_ = true;
        break;
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(50000));
    }
    if (spec_.own_process_group) signal_child(SIGKILL);  // leftovers of the group (background grandchildren) go too
    pid_ = -1;
    if (WIFEXITED(status_)) {
      r.exit_code = WEXITSTATUS(status_);
    } else if (WIFSIGNALED(status_)) {
      r.exit_code = -1;
      r.term_signal = WTERMSIG(status_);
    }
  }

  const CommandSpec& spec_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  int stdin_fd_ = -1, stdout_fd_ = -1, stderr_fd_ = -1;
  Clock::time_point deadline_;
};

}  // namespace

std::string find_executable(std::string_view name) {
  std::string path = current_path();
  if (path.empty()) path = "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + std::string(name);
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    start = end + 1;
  }
  return {};
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out.push_back(' ');
    bool plain = !a.empty() && a.find_first_of(" \t\n'\"\\|&;<>()$`*?[]#~") == std::string::npos;
    if (plain) {
      out += a;
    } else {
      out.push_back('\'');
      for (char c : a) {
        if (c == '\'')
          out += "'\\''";
        else
          out.push_back(c);
      }
      out.push_back('\'');
    }
  }
  return out;
}

std::string describe_failure(const CommandSpec& spec, const CommandResult& r) {
  std::string why;
  if (r.timed_out)
    why = fmt::format("timed out after {} ms and was killed", spec.timeout.count());
  else if (r.stopped)
    why = "was stopped (shutdown)";
  else if (r.term_signal)
    why = fmt::format("was killed by signal {}", r.term_signal);
  else
    why = fmt::format("exited with status {}", r.exit_code);
  std::string err = r.err;
  while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
  return fmt::format("command `{}` {}{}{}", command_line(spec.argv), why, err.empty() ? "" : ": ", err);
}

CommandResult run_command(const CommandSpec& spec) {
  CommandResult r;
  Child child(spec);
  child.pump(r, [&](std::string_view chunk) {
    size_t room = spec.max_stdout > r.out.size() ? spec.max_stdout - r.out.size() : 0;
    if (chunk.size() > room) r.stdout_truncated = true;
    r.out.append(chunk.substr(0, room));
  });
  return r;
}

CommandResult run_command_streaming(const CommandSpec& spec,
                                    const std::function<void(std::string_view chunk)>& on_stdout) {
  CommandResult r;
  Child child(spec);
  child.pump(r, on_stdout);
  return r;
}

size_t stream_command_lines(const CommandSpec& spec, const std::function<void(std::string_view line)>& on_line) {
  CommandResult r;
  Child child(spec);
  LineSplitter splitter(spec.max_line);
  child.pump(r, [&](std::string_view chunk) { splitter.feed(chunk, on_line, spec.on_long_line); });
  if (!r.timed_out && !r.stopped) splitter.finish(on_line, spec.on_long_line);
  if (!r.ok()) throw CommandError(describe_failure(spec, r));
  return splitter.lines();
}

}  // namespace gcm
