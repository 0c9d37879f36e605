#include "sacct/backfill.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "core/shutdown.h"
#include "core/subprocess.h"
#include "sacct/date_expr.h"
#include "sacct/sacct_records.h"
#include "slurm/parse_error.h"

namespace gcm::sacct {

namespace {

using SteadyClock = std::chrono::steady_clock;

// An unlinked temporary file: gone when closed, whatever happens to this process.
struct TempFile {
  int fd = -1;
  explicit TempFile(const std::string& dir) {
    std::string tmpl =
        (dir.empty() ? (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") : dir) + "/gcm-backfill-XXXXXX";
    fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd < 0)
      throw std::runtime_error(fmt::format("cannot create a temporary file in {}: {}", tmpl, std::strerror(errno)));
    ::unlink(tmpl.c_str());
  }
  ~TempFile() {
    if (fd >= 0) ::close(fd);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

// One command of a chunk: its output into a staged file (or this process' own), killed if this process dies (a
// SIGKILLed backfill once left its publish command running, which finished the chunk unrecorded, so the rerun
// published it again), and on a timeout or SIGTERM/SIGINT its whole process group gets SIGTERM, then SIGKILL 5 s on.
CommandResult run_chunk_command(std::vector<std::string> argv, std::chrono::milliseconds timeout, int in_fd, int out_fd,
                                int err_fd) {
  CommandSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = timeout;
  if (in_fd >= 0) spec.stdin_from = in_fd;
  spec.stdout_to = out_fd;
  spec.stderr_to = err_fd;
  spec.die_with_parent = true;
  spec.term_grace = std::chrono::seconds(5);
  spec.stop_requested = [] { return shutdown_requested(); };
  return run_command_streaming(spec, {});
}

std::string describe_status(const CommandResult& r) {
  if (r.term_signal) return fmt::format("killed by signal {}", r.term_signal);
  return fmt::format("exit status {}", r.exit_code);
}

std::string tail_of(int fd, size_t n) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size == 0) return "";
  off_t from = st.st_size > static_cast<off_t>(n) ? st.st_size - static_cast<off_t>(n) : 0;
  std::string s(static_cast<size_t>(st.st_size - from), '\0');
  ssize_t got = ::pread(fd, s.data(), s.size(), from);
  s.resize(got > 0 ? static_cast<size_t>(got) : 0);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Lines of the staged output: fsacct prints one line per record (broken records are joined) after its header.
uint64_t count_lines(int fd) {
  uint64_t lines = 0;
  char buf[1 << 16];
  off_t at = 0;
  bool last_newline = true;
  while (true) {
    ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) lines += buf[i] == '\n';
    last_newline = buf[n - 1] == '\n';
    at += n;
  }
  if (at > 0 && !last_newline) ++lines;
  return lines;
}

std::string hms(double seconds) {
  auto s = static_cast<int64_t>(seconds + 0.5);
  return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

}  // namespace

std::vector<Chunk> gen_time_bounds(int64_t start, int64_t end, int64_t step_seconds) {
  if (step_seconds <= 1)
    throw std::invalid_argument(fmt::format("the step must be more than 1 second (got {})", step_seconds));
  if (end < start) throw std::invalid_argument("the end of the range is before its start");
  std::vector<Chunk> out;
  for (int64_t t = start; t <= end; t += step_seconds) out.push_back({t, std::min(t + step_seconds - 1, end)});
  return out;
}

std::vector<Chunk> read_intervals(const std::string& text, int64_t now, const TimeZone& zone) {
  std::vector<Chunk> out;
  std::istringstream in(text);
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line[b] == '#') continue;
    size_t comma = line.find(',');
    if (comma == std::string::npos || line.find(',', comma + 1) != std::string::npos)
      throw std::invalid_argument(fmt::format("intervals line {}: expected 'start,end', got '{}'", n, line));
    try {
      Chunk c{parse_date_expr(line.substr(0, comma), now, zone), parse_date_expr(line.substr(comma + 1), now, zone)};
      if (c.end < c.start)
        throw std::invalid_argument(fmt::format("intervals line {}: the end is before the start", n));
      out.push_back(c);
    } catch (const slurm::ParseError& e) {
      throw std::invalid_argument(fmt::format("intervals line {}: {}", n, e.what()));
    }
  }
  return out;
}

BackfillState::BackfillState(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_);
  if (!in) {
    if (::access(path_.c_str(), F_OK) == 0)
      throw std::runtime_error(fmt::format("cannot read the state file {}: {}", path_, std::strerror(errno)));
    return;
  }
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string word;
    Chunk c;
    uint64_t records = 0;
    std::string s_iso, e_iso;
    if (!(ls >> word >> c.start >> c.end >> records >> s_iso >> e_iso)) continue;
    if (word == "done") done_.insert(c);
    if (word == "publishing") publishing_.insert(c);
  }
  for (const auto& c : done_) publishing_.erase(c);
}

bool BackfillState::interrupted(const Chunk& c) const {
  std::lock_guard<std::mutex> lock(mu_);
  return publishing_.count(c) > 0;
}

bool BackfillState::done(const Chunk& c) const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_.count(c) > 0;
}

void BackfillState::mark_done(const Chunk& c, uint64_t records, const TimeZone& zone) {
  std::lock_guard<std::mutex> lock(mu_);
  done_.insert(c);
  publishing_.erase(c);
  append("done", c, records, zone);
}

void BackfillState::mark_publishing(const Chunk& c, uint64_t records, const TimeZone& zone) {
  std::lock_guard<std::mutex> lock(mu_);
  append("publishing", c, records, zone);
}

// Under mu_.
void BackfillState::append(const std::string& word, const Chunk& c, uint64_t records, const TimeZone& zone) {
  if (path_.empty()) return;
  std::string line = fmt::format("{} {} {} {} {} {}\n", word, c.start, c.end, records, offset_iso(c.start, zone),
                                 offset_iso(c.end, zone));
  int fd = ::open(path_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("cannot write the state file {}: {}", path_, std::strerror(errno)));
  // Starts on a new line even after a torn write: a partial line then stays unparsable instead of merging.
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    char last = 0;
    if (::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n') line.insert(line.begin(), '\n');
  }
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  int err = errno;
  ::close(fd);
  if (!ok) throw std::runtime_error(fmt::format("cannot write the state file {}: {}", path_, std::strerror(err)));
}

std::vector<std::string> fsacct_chunk_argv(const BackfillOptions& o, const Chunk& c) {
  std::string states;
  for (const auto& s : terminal_job_state_names()) states += (states.empty() ? "" : ",") + s;
  return {o.gcm_binary,
          "fsacct",
          "--wrapper-batch-size",
          "1000",
          "-P",
          "-S",
          offset_iso(c.start, o.zone),
          "-E",
          offset_iso(c.end, o.zone),
          "-s",
          states,
          "-a",
          "-o",
          "all",
          "--duplicates",
          "--noconvert",
          "--clusters",
          o.cluster};
}

ChunkResult run_chunk_once(const BackfillOptions& o, const Chunk& c,
                           const std::function<void(uint64_t records)>& before_publish) {
  ChunkResult r;
  r.attempts = 1;
  try {
    TempFile out(o.temp_dir), err(o.temp_dir);
    CommandResult f = run_chunk_command(fsacct_chunk_argv(o, c), o.sacct_timeout, -1, out.fd, err.fd);
    if (f.stopped) {
      r.error = "interrupted (SIGTERM/SIGINT) while fsacct ran";
      return r;
    }
    if (f.timed_out) {
      r.error = fmt::format("fsacct timed out after {} s (--sacct-timeout); nothing was published",
                            o.sacct_timeout.count() / 1000.0);
      return r;
    }
    if (f.exit_code != 0) {
      std::string tail = tail_of(err.fd, 400);
      r.error = fmt::format("fsacct failed ({}){}; nothing was published", describe_status(f),
                            tail.empty() ? "" : ": " + tail);
      return r;
    }
    uint64_t lines = count_lines(out.fd);
    r.records = lines > 0 ? lines - 1 : 0;  // the header
    if (::lseek(out.fd, 0, SEEK_SET) != 0) throw std::runtime_error(fmt::format("lseek: {}", std::strerror(errno)));
    if (before_publish) before_publish(r.records);
    f = run_chunk_command(o.publish_cmd, o.publish_timeout, out.fd, 1, 2);
    if (f.stopped) {
      r.error = "interrupted (SIGTERM/SIGINT) while the publish command ran";
      return r;
    }
    if (f.timed_out) {
      r.error = fmt::format("the publish command timed out after {} s (--publish-timeout)",
                            o.publish_timeout.count() / 1000.0);
      return r;
    }
    if (f.exit_code != 0) {
      r.error = fmt::format("the publish command {} failed ({})", command_line(o.publish_cmd), describe_status(f));
      return r;
    }
    r.ok = true;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

BackfillSummary run_backfill(const BackfillOptions& o, const std::vector<Chunk>& chunks, BackfillState& state,
                             spdlog::logger& log) {
  BackfillSummary sum;
  sum.chunks = chunks.size();
  std::vector<size_t> todo;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (state.done(chunks[i]))
      ++sum.skipped;
    else
      todo.push_back(i);
  }
  if (sum.skipped)
    log.info("sacct_backfill: {} of {} chunk(s) already published (state file {}); {} to do", sum.skipped,
             chunks.size(), state.path(), todo.size());
  for (size_t i : todo)
    if (state.interrupted(chunks[i]))
      log.warn(
          "sacct_backfill: chunk {} .. {} was cut off while its publish command ran (an earlier run was "
          "killed); it may be partly published and is published again",
          offset_iso(chunks[i].start, o.zone), offset_iso(chunks[i].end, o.zone));
  std::mutex mu;
  const auto t0 = SteadyClock::now();
  size_t finished = 0;
  auto progress = [&] {  // under mu
    if (!o.progress) return;
    double elapsed = std::chrono::duration<double>(SteadyClock::now() - t0).count();
    size_t done = sum.skipped + finished;
    const int width = 30;
    int filled = chunks.empty() ? width : static_cast<int>(width * done / chunks.size());
    std::string bar =
        std::string(static_cast<size_t>(filled), '#') + std::string(static_cast<size_t>(width - filled), '.');
    double rate = elapsed > 0 ? static_cast<double>(sum.records) / elapsed : 0;
    std::string eta =
        finished ? hms(elapsed / static_cast<double>(finished) * static_cast<double>(todo.size() - finished)) : "?";
    std::fprintf(stderr, "\r[%s] %zu/%zu chunks  %llu records  %.1f rec/s  ETA %s%s\x1b[K", bar.c_str(), done,
                 chunks.size(), static_cast<unsigned long long>(sum.records), rate, eta.c_str(),
                 sum.failed ? fmt::format("  {} failed", sum.failed).c_str() : "");
    std::fflush(stderr);
  };
  {
    std::lock_guard<std::mutex> lock(mu);
    progress();
  }

  std::atomic<size_t> next{0};
  auto worker = [&] {
    while (!shutdown_requested()) {
      size_t k = next.fetch_add(1);
      if (k >= todo.size()) return;
      const Chunk& c = chunks[todo[k]];
      const std::string when = fmt::format("{} .. {}", offset_iso(c.start, o.zone), offset_iso(c.end, o.zone));
      auto c0 = SteadyClock::now();
      ChunkResult r;
      for (int attempt = 1; attempt <= o.retries + 1; ++attempt) {
        r = run_chunk_once(o, c, [&](uint64_t records) { state.mark_publishing(c, records, o.zone); });
        r.attempts = attempt;
        if (r.ok || shutdown_requested()) break;
        log.warn("sacct_backfill: chunk {} attempt {}/{} failed: {}", when, attempt, o.retries + 1, r.error);
        if (attempt <= o.retries && !sleep_unless_shutdown(o.retry_wait)) break;
      }
      double secs = std::chrono::duration<double>(SteadyClock::now() - c0).count();
      bool recorded = false;
      std::string state_error;
      if (r.ok) {
        try {
          state.mark_done(c, r.records, o.zone);
          recorded = true;
        } catch (const std::exception& e) {
          state_error = e.what();
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      ++finished;
      if (r.ok) {
        ++sum.published;
        sum.records += r.records;
        log.info("sacct_backfill: chunk {}/{} {}: published {} record(s) in {:.1f} s (attempt {})",
                 sum.skipped + finished, chunks.size(), when, r.records, secs, r.attempts);
        if (!recorded) log.error("sacct_backfill: chunk {} was published but not recorded: {}", when, state_error);
      } else {
        ++sum.failed;
        log.error("sacct_backfill: Failed to publish {}: {} (after {} attempt(s))", when, r.error, r.attempts);
      }
      progress();
      if (o.concurrently == 1 && k + 1 < todo.size() && !sleep_unless_shutdown(o.sleep)) return;
    }
  };
  size_t threads = o.concurrently <= 0 ? todo.size() : std::min(todo.size(), static_cast<size_t>(o.concurrently));
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (size_t i = 0; i < threads; ++i) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  if (o.progress) std::fprintf(stderr, "\n");
  log.info("sacct_backfill: {} chunk(s): {} published ({} records), {} already done, {} failed{}", sum.chunks,
           sum.published, sum.records, sum.skipped, sum.failed, shutdown_requested() ? ", stopped by signal" : "");
  return sum;
}

}  // namespace gcm::sacct
