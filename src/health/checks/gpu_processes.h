// What check-nvidia-smi and check-amd-smi share about the processes on a node's GPUs: which of the pids a GPU library
// lists are alive and not the suite's own tools, and running_procs_and_kill's retry, wait and SIGKILL.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "health/verdict.h"

namespace gcm {
class OptionBinder;
}

namespace gcm::health {

// The pids among `listed` that are alive under `procfs` (a zombie holds no GPU) and are not this suite's own: the
// suite runner gives its checks a session of their own (suite/supervisor.h), and a process of that session on a
// GPU is another check's tool (the epilog's cudaMemTest next to running_procs_and_kill), never a job's leftover.
// Run from a shell, this process leads no session, and nothing is skipped.
std::vector<unsigned> live_gpu_pids(const std::vector<unsigned>& listed, const std::string& procfs);

struct ProcsAndKillOptions {
  int retry_count = 3;
  double retry_interval_s = 3;
  bool force_kill = false;
};

// GCM's --running_procs_retry_count, --running_procs_interval and --running_procs_force_kill.
void add_running_procs_options(OptionBinder& b, ProcsAndKillOptions& o);

// running_procs_and_kill in GCM's words: `scan` is the running_procs rule (its outcome, and the pids it saw appended
// to *seen). OK when the GPUs are free at once, WARN when only after some attempts, CRITICAL when processes stay
// (without force_kill), else they are sent SIGKILL (never init or this process) and the GPUs watched for 5 s.
CheckOutcome running_procs_and_kill(const char* label, const ProcsAndKillOptions& opts,
                                    const std::function<CheckOutcome(std::vector<unsigned>* seen)>& scan);

}  // namespace gcm::health
