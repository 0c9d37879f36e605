// Runs a suite's checks in parallel, each in a child process of its own, and kills the ones that overrun.
//
// Why a process per check and not a thread: a thread cannot be killed. A built-in check stuck in a call (an NVML
// call that never returns, a statvfs on a dead NFS server, a read of a hung sysfs file) can only be abandoned, and
// an abandoned thread keeps what it holds: NVML's global lock, the stdio and logger locks, the process' memory.
// The checks after it in the same process then hang too, or the verdict cannot be printed, and the prolog is the
// one that hangs (peers §12.7: NHC's watchdog that could not kill a hung check). A forked child (no exec: the
// parent is this same binary, already initialised) costs about 1.3 ms of CPU (a thread: 0.02 ms; see
// bench/suite_bench.cc), is killed with SIGKILL on its process group at its deadline (the external tools it started
// go with it), and a crash in one check is that check's result instead of the whole prolog's. The parent forks every child before it starts any thread, so each
// child is a clean single-threaded copy.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace gcm::suite {

struct Job {
  std::string name;
  double timeout_s = 10;
  // Runs in the child, never returns (exec, or _exit). result_fd: a pipe for result lines back to the parent;
  // stdout and stderr are another pipe, captured.
  std::function<void(int result_fd)> child_main;
};

struct JobOutcome {
  bool started = false;       // fork succeeded
  bool exited = false;        // the child exited (exit_code) or died of a signal (term_signal)
  int exit_code = -1;
  int term_signal = 0;
  bool timed_out = false;     // killed at its own timeout
  bool budget_exhausted = false;  // killed because the suite's budget ran out first
  std::string start_error;    // why the fork failed
  std::string results;        // what the child wrote to result_fd
  std::string output;         // the end of its stdout+stderr (at most 64 KiB)
  double start = 0, end = 0;  // wall-clock seconds (Unix time)
};

// Starts every job at once, waits until each has finished or passed its deadline (min(its timeout, budget)),
// SIGKILLs the process group of each overrunning job and stops waiting for it (a process stuck in the kernel is
// not waited for: the suite never exceeds its budget by more than the kill latency). Returns outcomes in job order.
std::vector<JobOutcome> run_jobs(const std::vector<Job>& jobs, double budget_s);

}  // namespace gcm::suite
