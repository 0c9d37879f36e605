#include "health/checks/proc_table.h"

#include <dirent.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "core/ascii.h"
#include "health/checks/host_check.h"

namespace gcm::health {

namespace {

// The next blank-separated word of `s`, which is advanced past it; empty at the end. A loop over the bytes:
// find_first_of looks each byte up in the set with a call, 3.9 k instructions a /proc/PID/stat line against ~1 k.
std::string_view next_word(std::string_view& s) {
  size_t b = 0;
  while (b < s.size() && is_ascii_space(s[b])) ++b;
  size_t e = b;
  while (e < s.size() && !is_ascii_space(s[e])) ++e;
  std::string_view w = s.substr(b, e - b);
  s.remove_prefix(e);
  return w;
}

}  // namespace

std::optional<ProcInfo> parse_proc_stat(std::string_view stat, double uptime_s, long ticks_per_s) {
  // "pid (comm) S ppid ..." where comm may itself hold spaces and parentheses: it ends at the LAST ')'.
  size_t open = stat.find('(');
  // memrchr, not rfind: rfind compares byte by byte from the end of the ~250-byte line (800 instructions a line).
  const void* last = stat.empty() ? nullptr : ::memrchr(stat.data(), ')', stat.size());
  size_t close = last ? static_cast<size_t>(static_cast<const char*>(last) - stat.data()) : std::string_view::npos;
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  ProcInfo p;
  auto pid = parse_int(stat.substr(0, open));
  if (!pid) return std::nullopt;
  p.pid = static_cast<int>(*pid);
  p.comm = std::string(stat.substr(open + 1, close - open - 1));
  // After the comm: field 3 (state) ... field 22 (starttime), the 20th word. Words are found in place: this runs
  // for every process on the node, and splitting each line into strings was most of check-zombie's own time.
  std::string_view rest = stat.substr(close + 1);
  std::string_view word;
  std::string_view state;
  for (int n = 0; n < 20; ++n) {
    word = next_word(rest);
    if (word.empty()) return std::nullopt;
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

std::vector<ProcInfo> read_process_table(const std::string& procfs, bool with_cmdline) {
  HostRoots roots;
  roots.procfs = procfs;
  auto up = read_file(roots.proc("uptime"));
  if (!up) throw std::runtime_error(fmt::format("cannot read {}", roots.proc("uptime")));
  double uptime = 0;
  try {
    uptime = std::stod(*up);
  } catch (const std::exception&) {
    throw std::runtime_error(fmt::format("{}: expected seconds since boot, got '{}'", roots.proc("uptime"), trim(*up)));
  }
  long ticks = ::sysconf(_SC_CLK_TCK);
  std::vector<ProcInfo> v;
  DIR* d = ::opendir(procfs.c_str());
  if (!d) throw std::runtime_error(fmt::format("cannot list {}", procfs));
  // Each process's directory is the root's once, plus its number: HostRoots::proc joins with std::filesystem::path,
  // ~3 000 instructions a call, which for every process of a node was a third of check-zombie.
  std::string root = roots.proc("");
  if (root.empty() || root.back() != '/') root += '/';
  while (dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    std::string dir = root;
    dir += name;
    auto stat = read_file(dir + "/stat");
    if (!stat) continue;  // exited meanwhile
    auto p = parse_proc_stat(*stat, uptime, ticks);
    if (!p) continue;
    if (with_cmdline) {
      auto cmd = read_file(dir + "/cmdline");
      std::string c = cmd ? *cmd : "";
      while (!c.empty() && c.back() == '\0') c.pop_back();
      for (char& ch : c)
        if (ch == '\0') ch = ' ';
      p->cmdline = c.empty() ? "[" + p->comm + "]" : c;
    }
    v.push_back(std::move(*p));
  }
  ::closedir(d);
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
