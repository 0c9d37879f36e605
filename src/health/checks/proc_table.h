// The process table read straight from /proc (what `ps`/`pgrep` would print): per process its state letter, name,
// command line, age and context-switch counts. No `ps`, no shell, no strace.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gcm::health {

// What the checks read of one /proc/<pid>/stat line. comm points into the line the visitor of for_each_process was
// given (valid during the call only).
struct ProcStat {
  int pid = 0;
  char state = '?';        // R, S, D, Z, T, I, ...
  std::string_view comm;   // the process name (what pgrep matches)
  double elapsed_s = 0;    // seconds since it started (ps's etimes)
};

struct ProcInfo {
  int pid = 0;
  char state = '?';
  std::string comm;
  std::string cmdline;   // arguments joined by spaces; "[comm]" for kernel threads (as ps prints them)
  double elapsed_s = 0;
};

// Calls visit for every process under procfs, in directory order, without copying anything: a check that wants a
// few processes (zombies, D state) keeps only those. Processes that vanish while being read are skipped. Throws
// std::runtime_error naming the file when <procfs>/uptime cannot be read or procfs cannot be listed.
void for_each_process(const std::string& procfs, const std::function<void(const ProcStat&)>& visit);

// Every process, copied, with its command line when asked.
std::vector<ProcInfo> read_process_table(const std::string& procfs, bool with_cmdline);

// Parses the contents of /proc/<pid>/stat; nullopt when malformed. elapsed is computed from uptime_s.
std::optional<ProcStat> parse_proc_stat(std::string_view stat, double uptime_s, long ticks_per_s);

// voluntary + nonvoluntary context switches of a process (from /proc/<pid>/status); nullopt when gone.
std::optional<long long> context_switches(const std::string& procfs, int pid);

}  // namespace gcm::health
