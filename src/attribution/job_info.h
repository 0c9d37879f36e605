// The Slurm job a GPU works for, as the reference's JobInfo reads it from a process environment, plus the keys the
// OTLP processor and the join series use (account, qos, array ids).
#pragma once

#include <optional>
#include <string>

#include "attribution/process_environ.h"

namespace gcm {

struct JobInfo {
  int64_t job_id = -1;  // -1: no job (the reference's default)
  std::optional<std::string> job_user, job_gpus, job_name, job_partition, job_account, job_qos;
  std::optional<int64_t> job_num_gpus, job_num_cpus, job_num_nodes, array_job_id, array_task_id;
  std::optional<double> job_cpus_per_gpu;

  bool has_job() const { return job_id >= 0; }
};

// The reference's JobInfo.from_env: SLURM_JOB_ID, SLURM_JOB_USER, GPU_DEVICE_ORDINAL, SLURM_JOB_GPUS (count) or
// SLURM_GPUS, SLURM_CPUS_ON_NODE, SLURM_JOB_NAME, SLURM_JOB_PARTITION, SLURM_NNODES, cpus per GPU. Returns
// nullopt where the reference's consistency check fails (the number of SLURM_JOB_GPUS entries differs from the
// GPU_DEVICE_ORDINAL list) or a number does not parse, so that another process or source can answer instead.
std::optional<JobInfo> job_info_from_environ(const Environ& env);

}  // namespace gcm
