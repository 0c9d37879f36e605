#include "health/checks/proc_table.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "health/checks/host_check.h"

namespace gcm::health {

namespace {

// A byte that separates the words of a stat line: blanks, tabs, the final newline (and any control byte, which no
// field after the name holds). One comparison a byte: this runs over every process's line.
inline bool is_separator(char c) { return static_cast<unsigned char>(c) <= ' '; }

// The stat line of one process, read with one read(2) into buf relative to the procfs directory: a procfs file
// gives its whole text to the first read that has room for it, and a regular file (a test's procfs) gives less
// than asked only at its end, so a read that leaves room is the last, without the second read to see the end.
// Empty when the process is gone or the line does not fit (no stat line comes near 4 KiB).
std::string_view read_stat_line(int procfs_fd, std::string_view pid, char (&buf)[4096]) {
  char path[64];
  if (pid.size() > sizeof path - sizeof "/stat") return {};
  pid.copy(path, pid.size());
  std::memcpy(path + pid.size(), "/stat", sizeof "/stat");
  int fd = ::openat(procfs_fd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {};
  ssize_t n;
  do n = ::read(fd, buf, sizeof buf);
  while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n <= 0 || static_cast<size_t>(n) == sizeof buf) return {};
  return {buf, static_cast<size_t>(n)};
}

double proc_table_uptime(const std::string& procfs) {
  HostRoots roots;
  roots.procfs = procfs;
  auto up = read_file(roots.proc("uptime"));
  if (!up) throw std::runtime_error(fmt::format("cannot read {}", roots.proc("uptime")));
  try {
    return std::stod(*up);
  } catch (const std::exception&) {
    throw std::runtime_error(fmt::format("{}: expected seconds since boot, got '{}'", roots.proc("uptime"), trim(*up)));
  }
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view stat, double uptime_s, long ticks_per_s) {
  // "pid (comm) S ppid ..." where comm may itself hold spaces and parentheses: it ends at the LAST ')'.
  size_t open = stat.find('(');
  // memrchr, not rfind: rfind compares byte by byte from the end of the line; memrchr a word at a time.
  const void* last = stat.empty() ? nullptr : ::memrchr(stat.data(), ')', stat.size());
  size_t close = last ? static_cast<size_t>(static_cast<const char*>(last) - stat.data()) : std::string_view::npos;
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  ProcStat p;
  auto pid = parse_int(stat.substr(0, open));
  if (!pid) return std::nullopt;
  p.pid = static_cast<int>(*pid);
  p.comm = stat.substr(open + 1, close - open - 1);
  // After the comm: field 3 (state) ... field 22 (starttime), the 20th word, found in place.
  const char* at = stat.data() + close + 1;
  const char* end = stat.data() + stat.size();
  std::string_view word, state;
  for (int n = 0; n < 20; ++n) {
    while (at < end && is_separator(*at)) ++at;
    const char* begin = at;
    while (at < end && !is_separator(*at)) ++at;
    if (at == begin) return std::nullopt;
    word = std::string_view(begin, static_cast<size_t>(at - begin));
    if (n == 0) state = word;
  }
  if (state.size() != 1) return std::nullopt;
  p.state = state[0];
  auto start = parse_int(word);
  if (!start || ticks_per_s <= 0) return std::nullopt;
  p.elapsed_s = uptime_s - static_cast<double>(*start) / static_cast<double>(ticks_per_s);
  if (p.elapsed_s < 0) p.elapsed_s = 0;
  return p;
}

void for_each_process(const std::string& procfs, const std::function<void(const ProcStat&)>& visit) {
  double uptime = proc_table_uptime(procfs);
  long ticks = ::sysconf(_SC_CLK_TCK);
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(procfs.c_str()), ::closedir);  // closed when a visit throws too
  if (!d) throw std::runtime_error(fmt::format("cannot list {}", procfs));
  // Each stat file is opened relative to the listed directory: no path to build or walk from the root.
  int fd = ::dirfd(d.get());
  char buf[4096];
  while (dirent* e = ::readdir(d.get())) {
    std::string_view name = e->d_name;
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    std::string_view line = read_stat_line(fd, name, buf);
    if (line.empty()) continue;  // exited meanwhile
    if (auto p = parse_proc_stat(line, uptime, ticks)) visit(*p);
  }
}

std::vector<ProcInfo> read_process_table(const std::string& procfs, bool with_cmdline) {
  std::string root = procfs;
  if (root.empty() || root.back() != '/') root += '/';
  std::vector<ProcInfo> v;
  for_each_process(procfs, [&](const ProcStat& s) {
    ProcInfo p{s.pid, s.state, std::string(s.comm), {}, s.elapsed_s};
    if (with_cmdline) {
      auto cmd = read_file(root + std::to_string(s.pid) + "/cmdline");
      std::string c = cmd ? *cmd : "";
      while (!c.empty() && c.back() == '\0') c.pop_back();
      for (char& ch : c)
        if (ch == '\0') ch = ' ';
      p.cmdline = c.empty() ? "[" + p.comm + "]" : c;
    }
    v.push_back(std::move(p));
  });
  return v;
}

std::optional<long long> context_switches(const std::string& procfs, int pid) {
  auto s = read_file(fmt::format("{}/{}/status", procfs, pid));
  if (!s) return std::nullopt;
  long long total = 0;
  bool found = false;
  for (const auto& line : split_lines(*s)) {
    if (line.rfind("voluntary_ctxt_switches:", 0) == 0 || line.rfind("nonvoluntary_ctxt_switches:", 0) == 0) {
      if (auto n = parse_int(line.substr(line.find(':') + 1))) {
        total += *n;
        found = true;
      }
    }
  }
  if (!found) return std::nullopt;
  return total;
}

}  // namespace gcm::health
