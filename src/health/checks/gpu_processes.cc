#include "health/checks/gpu_processes.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/option_binder.h"

namespace gcm::health {
namespace {

// A process that exists and is not a zombie (a killed process whose parent has not reaped it yet holds no GPU).
bool pid_alive(const std::string& procfs, unsigned pid) {
  std::ifstream in(procfs + "/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return false;
  size_t paren = stat.rfind(')');  // the command name may contain spaces and parentheses
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z';
}

}  // namespace

std::vector<unsigned> live_gpu_pids(const std::vector<unsigned>& listed, const std::string& procfs) {
  pid_t self = ::getpid();
  bool own_session = ::getsid(0) == self;
  std::vector<unsigned> pids;
  for (unsigned pid : listed) {
    if (own_session && ::getsid(static_cast<pid_t>(pid)) == self) continue;
    if (pid_alive(procfs, pid)) pids.push_back(pid);
  }
  return pids;
}

void add_running_procs_options(OptionBinder& b, ProcsAndKillOptions& o) {
  b.option("--running_procs_retry_count", "running_procs_retry_count", o.retry_count,
           "Attempts of running_procs_and_kill.")
      ->capture_default_str();
  b.option("--running_procs_interval", "running_procs_interval", o.retry_interval_s, "Seconds between those attempts.")
      ->capture_default_str();
  b.option("--running_procs_force_kill", "running_procs_force_kill", o.force_kill,
           "True: SIGKILL the processes still on the GPUs after the last attempt.")
      ->capture_default_str();
}

CheckOutcome running_procs_and_kill(const char* label, const ProcsAndKillOptions& opts,
                                    const std::function<CheckOutcome(std::vector<unsigned>* seen)>& scan) {
  std::vector<unsigned> seen;
  for (int attempt = 1; attempt <= std::max(1, opts.retry_count); ++attempt) {
    seen.clear();
    CheckOutcome o = scan(&seen);
    if (o.code == ExitCode::OK) {
      if (attempt == 1) return o;
      return {ExitCode::WARN, fmt::format("{} check: the GPUs were free only after {} attempts", label, attempt)};
    }
    if (attempt < opts.retry_count) std::this_thread::sleep_for(std::chrono::duration<double>(opts.retry_interval_s));
  }
  std::string still = fmt::format("{} check: processes still on the GPUs: {}", label, fmt::join(seen, ", "));
  if (!opts.force_kill) return {ExitCode::CRITICAL, still};
  // Only processes seen on the selected GPUs; never init or this process.
  std::vector<unsigned> killed, failed;
  for (unsigned pid : seen) {
    if (pid <= 1 || pid == static_cast<unsigned>(::getpid())) continue;
    if (::kill(static_cast<pid_t>(pid), SIGKILL) == 0 || errno == ESRCH)
      killed.push_back(pid);
    else
      failed.push_back(pid);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::vector<unsigned> remaining;
  do {
    seen.clear();
    scan(&seen);
    remaining = seen;
    if (remaining.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  } while (std::chrono::steady_clock::now() < deadline);
  if (remaining.empty() && failed.empty())
    return {ExitCode::OK, fmt::format("{} check: pids are successfully killed: {}", label, fmt::join(killed, ", "))};
  return {ExitCode::CRITICAL,
          fmt::format("{} check: killed {}; could not kill {}; still running {}", label, fmt::join(killed, ", "),
                      fmt::join(failed, ", "), fmt::join(remaining, ", "))};
}

}  // namespace gcm::health
