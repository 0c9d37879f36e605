#include "health/checks/proc_table.h"

#include <dirent.h>
#include <unistd.h>

#include <stdexcept>

#include <fmt/format.h>

#include "health/checks/host_check.h"

namespace gcm::health {

namespace {

// The next blank-separated word of `s`, which is advanced past it; empty at the end.
std::string_view next_word(std::string_view& s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string_view::npos) {
    s = {};
    return {};
  }
  size_t e = s.find_first_of(" \t\n", b);
  if (e == std::string_view::npos) e = s.size();
  std::string_view w = s.substr(b, e - b);
  s.remove_prefix(e);
  return w;
}

}  // namespace

std::optional<ProcInfo> parse_proc_stat(std::string_view stat, double uptime_s, long ticks_per_s) {
  // "pid (comm) S ppid ..." where comm may itself hold spaces and parentheses: it ends at the LAST ')'.
  size_t open = stat.find('(');
  size_t close = stat.rfind(')');
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
  while (dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name.empty() || name[0] < '0' || name[0] > '9') continue;
    std::string dir = roots.proc(name);
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
