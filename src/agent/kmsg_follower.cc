#include "agent/kmsg_follower.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/retry.h"

namespace gcm::agent {

namespace {

// A character device that gives this many unusable records in a row is not a kernel log (/dev/zero, /dev/urandom):
// reading it on would burn a CPU. It is treated as a read error: closed, and retried after the backoff.
constexpr int kMaxRejectsInARow = 1000;
// Distinct error texts remembered so each is logged once; past that, new ones are counted but not logged.
constexpr size_t kMaxLoggedErrors = 64;

std::string open_hint(int err) {
  if (err == EACCES || err == EPERM) return " (reading the kernel log needs root or CAP_SYSLOG)";
  return "";
}

int poll_ms(std::chrono::milliseconds d) { return static_cast<int>(std::max<int64_t>(0, d.count())); }

}  // namespace

double kmsg_unix_time(uint64_t ts_usec) {
  timespec real{}, mono{};
  ::clock_gettime(CLOCK_REALTIME, &real);
  ::clock_gettime(CLOCK_MONOTONIC, &mono);
  double boot =
      (static_cast<double>(real.tv_sec) + real.tv_nsec / 1e9) - (static_cast<double>(mono.tv_sec) + mono.tv_nsec / 1e9);
  return boot + static_cast<double>(ts_usec) / 1e6;
}

KmsgFollower::KmsgFollower(KmsgFollowerOptions options, Callback callback)
    : options_(std::move(options)), callback_(std::move(callback)) {
  if (!options_.log) options_.log = spdlog::default_logger();
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

KmsgFollower::~KmsgFollower() {
  stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void KmsgFollower::start() {
  if (thread_.joinable()) return;
  uint64_t drained = 0;  // a stop() before this start() left the eventfd signalled
  [[maybe_unused]] ssize_t n = ::read(wake_fd_, &drained, sizeof drained);
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void KmsgFollower::stop() {
  stopping_ = true;
  if (wake_fd_ >= 0) {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
}

KmsgFollowerStats KmsgFollower::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

// ---- waiting ------------------------------------------------------------------------------------------------------

bool KmsgFollower::wait_readable(int fd, std::chrono::milliseconds timeout) {
  pollfd fds[2] = {{fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  int n = ::poll(fds, 2, poll_ms(timeout));
  if (n <= 0 || stopping_) return false;  // timeout, EINTR or stop: the caller looks at stopping_ and goes on
  return fds[0].revents != 0;             // POLLIN, or POLLHUP/POLLERR that the next read() explains
}

void KmsgFollower::sleep_for(std::chrono::milliseconds d) {
  auto deadline = std::chrono::steady_clock::now() + d;
  while (!stopping_) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    pollfd wake{wake_fd_, POLLIN, 0};
    ::poll(&wake, 1, poll_ms(std::min(left, options_.poll_interval)));
  }
}

// ---- errors -------------------------------------------------------------------------------------------------------

void KmsgFollower::note_error(const std::string& what) {
  bool log = false;
  {
    std::lock_guard lock(mu_);
    stats_.last_error = what;
    stats_.open = false;
    unrecovered_ = true;
    if (!logged_errors_.count(what) && logged_errors_.size() < kMaxLoggedErrors) {
      logged_errors_.insert(what);
      log = true;
    }
  }
  // Logged once per distinct text: a missing /dev/kmsg retried every minute for a month is one line.
  if (log)
    options_.log->warn("kernel log: {}; retrying with a backoff (at most every {} s)", what,
                       options_.retry_max.count() / 1000);
}

void KmsgFollower::note_open() {
  bool recovered = false;
  {
    std::lock_guard lock(mu_);
    stats_.open = true;
    recovered = unrecovered_;
    unrecovered_ = false;
  }
  if (recovered) options_.log->info("kernel log: reading {} again", options_.path);
}

int KmsgFollower::open_path(Kind* kind) {
  int fd = ::open(options_.path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  std::string error;
  if (fd < 0) {
    int err = errno;
    error = fmt::format("cannot open {}: {}{}", options_.path, std::strerror(err), open_hint(err));
  } else {
    struct stat st {};
    ::fstat(fd, &st);
    if (S_ISCHR(st.st_mode)) {
      *kind = Kind::Device;
    } else if (S_ISFIFO(st.st_mode)) {
      *kind = Kind::Fifo;
    } else if (S_ISREG(st.st_mode)) {
      *kind = Kind::File;
    } else {
      error = fmt::format("{} is neither a character device (/dev/kmsg), a FIFO nor a regular file", options_.path);
      ::close(fd);
      fd = -1;
    }
  }
  if (fd < 0) {
    {
      std::lock_guard lock(mu_);
      ++stats_.open_errors;
    }
    note_error(error);
  }
  return fd;
}

// ---- records ------------------------------------------------------------------------------------------------------

void KmsgFollower::reject(bool too_long, std::string_view why) {
  ++rejects_in_a_row_;
  std::lock_guard lock(mu_);
  if (too_long) {
    ++stats_.long_records;
  } else {
    ++stats_.bad_records;
    stats_.last_bad_record = std::string(why);
  }
}

void KmsgFollower::deliver(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::string error;
  auto rec = parse_kmsg_record(text, &error);
  if (!rec) {
    reject(false, fmt::format("{}: \"{}\"", error, text.substr(0, 80)));
    return;
  }
  rejects_in_a_row_ = 0;
  if (resume_after_) {
    if (rec->seq <= *resume_after_) return;  // /dev/kmsg reopened: this one was delivered before the error
    resume_after_.reset();
  }
  uint64_t lost = 0;
  if (after_overflow_ && last_seq_ && rec->seq > *last_seq_ + 1) lost = rec->seq - *last_seq_ - 1;
  after_overflow_ = false;
  last_seq_ = rec->seq;
  auto xid = xid_parser_.feed(rec->message);
  {
    std::lock_guard lock(mu_);
    ++stats_.records;
    stats_.records_lost += lost;
    if (xid) ++stats_.xids;
  }
  try {
    callback_(*rec, xid);
  } catch (const std::exception& e) {
    // The agent's callback failing must not end the follower (nor the process, on this thread).
    options_.log->error("kernel log: the record handler failed: {}", e.what());
  }
}

int KmsgFollower::drain_device(const ReadFn& read_fn, size_t budget) {
  std::string buf(options_.max_record + 1, '\0');  // one byte more: a full buffer means a longer record
  for (size_t i = 0; i < budget && !stopping_; ++i) {
    ssize_t n = read_fn(buf.data(), buf.size());
    if (n > 0) {
      if (static_cast<size_t>(n) > options_.max_record)
        reject(true, "");
      else
        deliver(std::string_view(buf.data(), static_cast<size_t>(n)));
    } else if (n == 0) {
      return 0;  // not what /dev/kmsg does; a device at its end
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return 0;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EPIPE) {
      // The ring overwrote records we had not read; the next read returns the oldest one left.
      after_overflow_ = true;
      std::lock_guard lock(mu_);
      ++stats_.overflows;
    } else if (errno == EINVAL) {
      reject(true, "");  // a record longer than our buffer: the kernel skips it
    } else {
      return errno;
    }
    if (rejects_in_a_row_ >= kMaxRejectsInARow) return EBADMSG;
  }
  return 0;
}

// ---- line mode (FIFO, regular file) -------------------------------------------------------------------------------

void KmsgFollower::flush_record() {
  if (!pending_.empty()) deliver(pending_);
  pending_.clear();
}

void KmsgFollower::on_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!line.empty() && line[0] == ' ') {  // a dictionary line of the record being assembled
    if (skipping_record_) return;
    if (pending_.empty()) {
      reject(false, "expected a record header before the dictionary line");
      return;
    }
    if (pending_.size() + 1 + line.size() > options_.max_record) {
      pending_.clear();
      skipping_record_ = true;
      reject(true, "");
      return;
    }
    pending_.push_back('\n');
    pending_.append(line);
    return;
  }
  flush_record();
  skipping_record_ = false;
  pending_.assign(line);  // an empty line ends a record and starts none
}

void KmsgFollower::on_long_line(bool dictionary_line) {
  if (dictionary_line && skipping_record_) return;  // its record was counted already
  if (dictionary_line)
    pending_.clear();  // the record it belongs to is too long as a whole
  else
    flush_record();  // a header too long: the record before it is complete; its dictionary belongs to nothing
  skipping_record_ = true;
  std::lock_guard lock(mu_);
  ++stats_.long_records;
}

void KmsgFollower::end_line() {
  if (line_too_long_)
    on_long_line(line_is_dictionary_);
  else
    on_line(line_);
  line_.clear();
  line_too_long_ = false;
  line_is_dictionary_ = false;
}

void KmsgFollower::feed_lines(std::string_view chunk) {
  while (!chunk.empty()) {
    size_t nl = chunk.find('\n');
    std::string_view part = chunk.substr(0, nl);
    if (line_.empty() && !line_too_long_ && !part.empty()) line_is_dictionary_ = part[0] == ' ';
    if (!line_too_long_ && line_.size() + part.size() <= options_.max_record)
      line_.append(part);
    else if (!line_too_long_) {
      line_too_long_ = true;
      line_.clear();  // only its first byte still matters, and line_is_dictionary_ keeps that
    }
    if (nl == std::string_view::npos) return;
    end_line();
    chunk.remove_prefix(nl + 1);
  }
}

// ---- the loop -----------------------------------------------------------------------------------------------------

bool KmsgFollower::follow(int fd, Kind kind) {
  // Idle: the last line, though without its "\n", and the record it ends are complete.
  auto idle_flush = [&] {
    if (!line_.empty() || line_too_long_) end_line();
    flush_record();
  };
  line_.clear();
  line_too_long_ = false;
  pending_.clear();
  skipping_record_ = false;
  rejects_in_a_row_ = 0;
  char buf[65536];
  while (!stopping_) {
    if (kind == Kind::Device) {
      if (!wait_readable(fd, options_.poll_interval)) continue;
      int err = drain_device([fd](char* b, size_t len) { return ::read(fd, b, len); });
      if (err == EBADMSG) {
        note_error(fmt::format("{} gives no kernel log records ({} unusable in a row): not /dev/kmsg", options_.path,
                               kMaxRejectsInARow));
        return true;
      }
      if (err != 0) {
        note_error(fmt::format("cannot read {}: {}", options_.path, std::strerror(err)));
        resume_after_ = last_seq_;
        return true;
      }
      continue;
    }
    // A FIFO is waited on (a fresh one without a writer polls as not readable); a file is read, then slept on.
    if (kind == Kind::Fifo && !wait_readable(fd, options_.poll_interval)) {
      idle_flush();
      continue;
    }
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      feed_lines(std::string_view(buf, static_cast<size_t>(n)));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) {
      note_error(fmt::format("cannot read {}: {}", options_.path, std::strerror(errno)));
      return true;
    }
    if (kind == Kind::Fifo && n == 0) {  // the writer went away: reopen to wait for the next one
      idle_flush();
      return false;
    }
    if (kind == Kind::File) {
      struct stat st {};
      if (::fstat(fd, &st) == 0 && st.st_size < ::lseek(fd, 0, SEEK_CUR)) ::lseek(fd, 0, SEEK_SET);  // truncated
      sleep_for(options_.poll_interval);
      // Nothing new for a whole interval: the record read last is complete.
      if (::fstat(fd, &st) == 0 && st.st_size == ::lseek(fd, 0, SEEK_CUR)) idle_flush();
    }
  }
  return false;
}

void KmsgFollower::run() {
  Backoff backoff(std::chrono::duration<double>(options_.retry_initial).count(),
                  std::chrono::duration<double>(options_.retry_max).count());
  while (!stopping_) {
    Kind kind = Kind::File;
    int fd = open_path(&kind);
    if (fd < 0) {
      sleep_for(backoff.failed_ms());
      continue;
    }
    note_open();
    bool failed = follow(fd, kind);
    ::close(fd);
    {
      std::lock_guard lock(mu_);
      stats_.open = false;
      // Counted once the old end is closed, so that a writer that waits for the count opens the new one (a writer
      // that opened the old end would lose what it wrote, or take a SIGPIPE).
      if (kind == Kind::Fifo && !failed && !stopping_) ++stats_.reopens;
    }
    if (stopping_) break;
    if (failed)  // wait before trying again, longer each time
      sleep_for(backoff.failed_ms());
    else
      backoff.succeeded();  // a FIFO's writer left: reopen at once
  }
}

}  // namespace gcm::agent
