// What the whole-process load runs (processor_load, cluster_load) share: their descriptor limit, and what they read of
// the process under load and of their own latency samples.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace gcm::bench {

// Thousands of client sockets need more descriptors than the usual soft limit of 1024, in this process and in the
// processor it starts (which inherits the limit).
inline void raise_open_files_limit() {
  rlimit nofile{};
  getrlimit(RLIMIT_NOFILE, &nofile);
  nofile.rlim_cur = nofile.rlim_max;
  setrlimit(RLIMIT_NOFILE, &nofile);
}

// The p-quantile (0..1) of v, 0 for none.
inline double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// VmRSS of pid in KiB, -1 when it is gone.
inline long rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// The name and user and system CPU seconds of a /proc/.../stat file (a process's or one of its threads'); an empty
// name when it could not be read (a thread that ended meanwhile).
struct ThreadCpu {
  std::string name;
  double user_s = 0, system_s = 0;
};
inline ThreadCpu read_stat_cpu(const std::filesystem::path& stat_file) {
  std::ifstream in(stat_file);
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  size_t open = stat.find('('), close = stat.rfind(')');  // the name may hold blanks and parentheses
  ThreadCpu t;
  if (open == std::string::npos || close == std::string::npos) return t;
  t.name = stat.substr(open + 1, close - open - 1);
  std::istringstream rest(stat.substr(close + 2));  // fields from the 3rd on
  std::string field;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) t.user_s = std::stod(field) / static_cast<double>(sysconf(_SC_CLK_TCK));
    if (i == 15) t.system_s = std::stod(field) / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  return t;
}

// User + system CPU seconds of the whole process so far.
inline double cpu_seconds(pid_t pid) {
  ThreadCpu t = read_stat_cpu("/proc/" + std::to_string(pid) + "/stat");
  return t.user_s + t.system_s;
}

// User and system CPU seconds of each of a process's threads, summed by thread name (/proc/PID/task/*/stat): which
// of the processor's roles (http-io, http-handler, forward-sender, job-refresh) takes the CPU.
inline std::map<std::string, ThreadCpu> cpu_seconds_by_thread(pid_t pid) {
  std::map<std::string, ThreadCpu> out;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    ThreadCpu t = read_stat_cpu(task.path() / "stat");
    if (t.name.empty()) continue;
    ThreadCpu& sum = out[t.name];
    sum.user_s += t.user_s;
    sum.system_s += t.system_s;
  }
  return out;
}

// The figures of a `/usr/bin/time -v -o FILE` report.
struct TimeReport {
  double user_s = 0, system_s = 0;
  long max_rss_kib = 0;
  long voluntary_switches = 0, involuntary_switches = 0;  // context switches: waits, and preemptions
};
inline TimeReport read_time_report(const std::string& path) {
  TimeReport r;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto value = [&] { return line.substr(line.rfind(':') + 1); };
    if (line.find("User time (seconds):") != std::string::npos) r.user_s = std::stod(value());
    if (line.find("System time (seconds):") != std::string::npos) r.system_s = std::stod(value());
    if (line.find("Maximum resident set size") != std::string::npos) r.max_rss_kib = std::stol(value());
    if (line.find("Voluntary context switches:") != std::string::npos) r.voluntary_switches = std::stol(value());
    if (line.find("Involuntary context switches:") != std::string::npos) r.involuntary_switches = std::stol(value());
  }
  return r;
}

}  // namespace gcm::bench
