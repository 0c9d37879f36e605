// The Slurm job a GPU works for (slurm/job_info.h), read from a process environment.
#pragma once

#include <optional>
#include <string>

#include "attribution/process_environ.h"
#include "slurm/job_info.h"

namespace gcm {

// The reference's JobInfo.from_env: SLURM_JOB_ID, SLURM_JOB_USER, GPU_DEVICE_ORDINAL, SLURM_JOB_GPUS (count) or
// SLURM_GPUS, SLURM_CPUS_ON_NODE, SLURM_JOB_NAME, SLURM_JOB_PARTITION, SLURM_NNODES, cpus per GPU. Returns
// nullopt where the reference's consistency check fails (the number of SLURM_JOB_GPUS entries differs from the
// GPU_DEVICE_ORDINAL list) or a number does not parse, so that another process or source can answer instead.
std::optional<JobInfo> job_info_from_environ(const Environ& env);

}  // namespace gcm
