// Attribution source "slurmd-local": the jobs slurmd runs on this node (`scontrol listpids`), each job's GPUs and
// metadata from one of its processes' environment. Unlike process-based sources it also attributes GPUs that are
// allocated to a job but run no process (yet). Every job counts, not only the first (shelper stopped early).
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/job_info.h"

namespace gcm {

// (pid, job id) rows of `scontrol listpids` output ("PID JOBID STEPID LOCALID GLOBALID" and a header line).
// Rows that are not numeric (the header, "-1" job ids of slurmstepd itself) are skipped.
std::vector<std::pair<uint32_t, int64_t>> parse_listpids(std::string_view output);

// The physical GPU indices of a job from its environment: SLURM_JOB_GPUS, else SLURM_STEP_GPUS.
std::vector<unsigned> job_gpus_from_environ(const Environ& env);

struct SlurmdLocalOptions {
  std::string scontrol = "scontrol";
  std::string procfs = "/proc";
  std::chrono::milliseconds timeout{10000};
  // This node's Slurm name. Needed where several slurmd run on one host (scontrol cannot tell which is local);
  // empty: scontrol asks the slurmd of this host.
  std::string node;
};

// Jobs per GPU index. Throws std::runtime_error naming the command when scontrol fails.
std::map<unsigned, std::vector<JobInfo>> attribute_slurmd_local(const SlurmdLocalOptions& opts);

}  // namespace gcm
