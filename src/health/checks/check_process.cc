// health_checks check-process: check-zombie, check-dstate, check-running-process. All read the process table from
// --path.procfs directly (state, age, command line) instead of running ps/pgrep/awk through a shell.
#include <chrono>
#include <regex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "cli/option_binder.h"
#include "health/checks/host_check.h"
#include "health/checks/proc_table.h"

namespace gcm::health {
namespace {

const bool kCheckProcessGroupRegistered = register_health_group(
    "check-process", "Process checks: zombies, processes stuck in uninterruptible sleep, required processes.");

struct ZombieOpts {
  HostRoots roots;
  int64_t elapsed = 300;
};

const bool kZombie = register_simple_check<ZombieOpts>(
    {"check-process", "check-zombie"},
    "WARNING when a zombie process (state Z) is older than --elapsed seconds: the node needs a reboot.", true,
    "check zombie", "disable_check_zombie",
    [](OptionBinder& b, ZombieOpts& o) {
      b.option("--elapsed", "elapsed", o.elapsed, "Zombies older than this many seconds count.")->capture_default_str();
      add_procfs_option(b, o.roots);
    },
    [](CheckRun&, const ZombieOpts& o) -> CheckOutcome {
      std::vector<int> pids;
      for_each_process(o.roots.procfs, [&](const ProcStat& p) {
        if (p.state == 'Z' && p.elapsed_s > static_cast<double>(o.elapsed)) pids.push_back(p.pid);
      });
      if (!pids.empty())
        return {ExitCode::WARN,
                fmt::format("Found zombie processes. Node needs a reboot. pids: [{}]", fmt::join(pids, ", "))};
      return {ExitCode::OK, "No zombie processes were found."};
    });

struct DstateOpts {
  HostRoots roots;
  int64_t elapsed = 300;
  std::vector<std::string> names;
  double sample_interval = 0.5;
};

// Stuck, without strace: a process that is in D state, older than --elapsed, and still in D state with not one
// context switch after --sample-interval seconds. (The reference attached strace for 0.5 s, which needs sudo and
// strace on every node and itself blocks on a process in D state.)
const bool kDstate = register_simple_check<DstateOpts>(
    {"check-process", "check-dstate"},
    "CRITICAL when a process older than --elapsed seconds is stuck in uninterruptible sleep (state D, and no "
    "context switch during --sample-interval seconds).",
    true, "check dstate", "disable_check_dstate",
    [](OptionBinder& b, DstateOpts& o) {
      b.option("--elapsed", "elapsed", o.elapsed, "Only processes older than this many seconds.")
          ->capture_default_str();
      b.option("--process-name", "process_name", o.names,
               "Only processes whose name matches one of these regexes (searched anywhere in the name), repeatable.")
          ->allow_extra_args(false);
      b.option("--sample-interval", "sample_interval", o.sample_interval,
               "Seconds a candidate is watched for progress (context switches).")
          ->capture_default_str()
          ->check(CLI::Range(0.0, 60.0));
      add_procfs_option(b, o.roots);
    },
    [](CheckRun&, const DstateOpts& o) -> CheckOutcome {
      std::vector<std::regex> res;
      for (const auto& n : o.names) {
        try {
          res.emplace_back(n);
        } catch (const std::regex_error& e) {
          throw CheckUsageError(fmt::format("--process-name '{}' is not a valid regex: {}", n, e.what()));
        }
      }
      std::vector<std::pair<int, long long>> candidates;
      for_each_process(o.roots.procfs, [&](const ProcStat& p) {
        if (p.state != 'D' || p.elapsed_s <= static_cast<double>(o.elapsed)) return;
        if (!res.empty() && std::none_of(res.begin(), res.end(), [&](const std::regex& re) {
              return std::regex_search(p.comm.begin(), p.comm.end(), re);
            }))
          return;
        auto cs = context_switches(o.roots.procfs, p.pid);
        candidates.emplace_back(p.pid, cs ? *cs : -1);
      });
      std::vector<int> stuck;
      if (!candidates.empty()) {
        std::this_thread::sleep_for(std::chrono::duration<double>(o.sample_interval));
        for (auto [pid, before] : candidates) {
          auto stat = read_file(fmt::format("{}/{}/stat", o.roots.procfs, pid));
          if (!stat) continue;  // gone: not stuck
          auto p = parse_proc_stat(*stat, 0, 100);
          if (!p || p->state != 'D') continue;
          auto after = context_switches(o.roots.procfs, pid);
          if (after && *after == before) stuck.push_back(pid);
        }
      }
      return {stuck.empty() ? ExitCode::OK : ExitCode::CRITICAL,
              fmt::format("stuck processes: [{}]", fmt::join(stuck, ", "))};
    });

struct RunningOpts {
  HostRoots roots;
  std::vector<std::string> names;
};

const bool kRunning = register_simple_check<RunningOpts>(
    {"check-process", "check-running-process"},
    "CRITICAL when no process's command line matches -p NAME (a regex, as grep reads it); one verdict per name, the "
    "worst wins.",
    true, "running process", "disable_running_process",
    [](OptionBinder& b, RunningOpts& o) {
      b.option("-p,--process-name", "process_name", o.names, "A process that must be running (regex), repeatable.")
          ->required()
          ->allow_extra_args(false);
      add_procfs_option(b, o.roots);
    },
    [](CheckRun&, const RunningOpts& o) -> CheckOutcome {
      auto table = read_process_table(o.roots.procfs, true);
      int self = static_cast<int>(::getpid());
      Findings v;
      for (const auto& name : o.names) {
        std::regex re;
        try {
          re = std::regex(name, std::regex::basic);
        } catch (const std::regex_error& e) {
          throw CheckUsageError(fmt::format("--process-name '{}' is not a valid regex: {}", name, e.what()));
        }
        std::string found;
        for (const auto& p : table) {
          if (p.pid == self || p.cmdline.find("check-running-process") != std::string::npos) continue;
          if (std::regex_search(p.cmdline, re)) found += fmt::format("\n {} {}", p.pid, p.cmdline);
        }
        if (found.empty())
          v.add(ExitCode::CRITICAL, fmt::format("Process {}: not running.", name));
        else
          v.add(ExitCode::OK, fmt::format("Process {}: running. output:{}", name, found));
      }
      return v.outcome();
    });

}  // namespace
}  // namespace gcm::health
