// Runs a suite's checks in parallel in child processes and kills the ones that overrun.
//
// Why processes and not threads of the runner: a thread cannot be killed. A built-in check stuck in a call (an NVML
// call that never returns, a statvfs on a dead NFS server, a read of a hung sysfs file) can only be abandoned, and
// an abandoned thread keeps what it holds: NVML's global lock, the stdio and logger locks, the process' memory.
// The checks after it in the same process then hang too, or the verdict cannot be printed, and the prolog is the
// one that hangs (peers §12.7: NHC's watchdog that could not kill a hung check). A forked child (no exec: the
// parent is this same binary, already initialised) is killed with SIGKILL on its process group at its deadline
// (the external tools it started go with it), and a crash in it is its checks' result instead of the whole
// prolog's. The parent forks every child before it starts any thread, so each child is a clean single-threaded copy.
//
// A child is not free, though: on the testbed's VM a forked child that loads NVML costs about 15 ms of CPU (page
// faults of the copy, the library's load and init), which is most of what a prolog adds to a job's start. So the
// built-in checks of a profile share one child (a *group*), each on a thread of its own there, and keep their own
// deadlines: a part (one check) reports through pipes of its own, and closing its result pipe says it is done (its
// own last result line says how it ended: the supervisor cannot tell that close from the process' exit).
// When a part overruns, the supervisor kills the whole group, reports that part as timed out, and marks the group's
// unfinished parts `interrupted`, for the caller to run again in processes of their own with the budget left.
//
// Why its own spawn and not core/subprocess (which every other external command goes through): run_command starts
// one command and waits for it, while the supervisor runs a whole profile at once in one poll loop (every child's
// output, result and pidfd together, each with its own deadline); most of its children are forks without exec
// (core/subprocess only execs) that report over extra result pipes; and each child needs a session of its own
// (kill_session), which core/subprocess's process groups do not give. The external commands those checks run go
// through core/subprocess in turn.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace gcm::suite {

// One job in a process of its own: an external command, or a built-in check that must not share its process.
struct Job {
  std::string name;
  double timeout_s = 10;
  // Runs in the child, never returns (exec, or _exit). result_fd: a pipe for result lines back to the parent;
  // stdout and stderr are another pipe, captured.
  std::function<void(int result_fd)> child_main;
  // Or a command to start with posix_spawn (searched on PATH when it has no '/'), which spares the copy of this
  // process that fork makes (page tables, and a fault for each page either side writes until the exec). When it
  // cannot be started, `results` holds {"start_error": "cannot run '<argv[0]>': <reason>"} and exit_code is 127.
  std::vector<std::string> argv;
};

// The pipes of one part of a group: its log/output lines and its result lines. The part closes both when done.
struct PartFds {
  int out_fd = -1;
  int result_fd = -1;
};

// Several parts in one process. The child's own stdout and stderr go to a third pipe (`process_output`).
struct GroupJob {
  std::string name;
  std::vector<double> timeouts_s;  // one per part
  // Runs in the child with one PartFds per part, never returns (_exit).
  std::function<void(const std::vector<PartFds>& parts)> child_main;
};

struct JobOutcome {
  bool started = false;  // fork succeeded
  bool exited = false;   // the process exited (exit_code) or died of a signal (term_signal)
  int exit_code = -1;
  int term_signal = 0;
  bool timed_out = false;         // killed at its own timeout
  bool budget_exhausted = false;  // killed because the suite's budget ran out first
  bool interrupted = false;       // a part of a group: killed unfinished because another part of its group overran
  std::string start_error;        // why the fork failed
  std::string results;            // what the child (or part) wrote to its result pipe
  std::string output;             // the end of its stdout+stderr, or the part's own output pipe (at most 64 KiB)
  std::string process_output;     // a part of a group: the end of the group process' stdout+stderr
  double start = 0, end = 0;      // wall-clock seconds (Unix time)
};

// Starts every job at once, waits until each has finished or passed its deadline (min(its timeout, budget)),
// SIGKILLs the process group of each overrunning job and stops waiting for it (a process stuck in the kernel is
// not waited for: the suite never exceeds its budget by more than the kill latency). Returns outcomes in job order.
std::vector<JobOutcome> run_jobs(const std::vector<Job>& jobs, double budget_s);

// The same for jobs and groups together: one outcome per job, then one vector of outcomes per group (part order).
struct RunResult {
  std::vector<JobOutcome> jobs;
  std::vector<std::vector<JobOutcome>> groups;
};
RunResult run_all(const std::vector<Job>& jobs, const std::vector<GroupJob>& groups, double budget_s);

}  // namespace gcm::suite
