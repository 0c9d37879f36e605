// The process table read straight from /proc (what `ps`/`pgrep` would print): per process its state letter, name,
// command line, age and context-switch counts. No `ps`, no shell, no strace.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gcm::health {

struct ProcInfo {
  int pid = 0;
  char state = '?';      // R, S, D, Z, T, I, ...
  std::string comm;      // the process name (what pgrep matches)
  std::string cmdline;   // arguments joined by spaces; "[comm]" for kernel threads (as ps prints them)
  double elapsed_s = 0;  // seconds since it started (ps's etimes)
};

// Every process under procfs; processes that vanish while being read are skipped. Throws std::runtime_error naming
// the file when <procfs>/uptime cannot be read.
std::vector<ProcInfo> read_process_table(const std::string& procfs, bool with_cmdline);

// Parses the contents of /proc/<pid>/stat; nullopt when malformed. elapsed is computed from uptime_s.
std::optional<ProcInfo> parse_proc_stat(std::string_view stat, double uptime_s, long ticks_per_s);

// voluntary + nonvoluntary context switches of a process (from /proc/<pid>/status); nullopt when gone.
std::optional<long long> context_switches(const std::string& procfs, int pid);

}  // namespace gcm::health
