// What slurm_processor adds to telemetry of one host: each GPU's job metadata as the reference's shelper
// SlurmMetadata (nine strings; several jobs on one GPU give sorted, comma-joined values), the same fields as
// lists over all GPUs of the host (GetGPUData: sorted unique values), and the host's job ids.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "attribution/job_info.h"

namespace gcm::processor {

// The attribute keys, in the reference's order.
inline constexpr std::array<const char*, 9> kJobKeys = {
    "job_id", "job_name", "qos", "array_job_id", "array_task_id", "username", "partition", "account", "num_nodes"};

using JobFields = std::array<std::string, 9>;  // values for kJobKeys

struct NodeJobs {
  std::map<std::string, JobFields, std::less<>> by_gpu;  // GPU index as text ("0", "1", ...)
  std::array<std::vector<std::string>, 9> lists;         // per key, sorted unique non-empty values over all GPUs
  std::vector<std::string> job_ids;                      // sorted unique
  std::string job_ids_joined;                            // comma-joined, for the resource attribute of logs and traces
};

// Builds the table from the attribution's jobs per GPU index.
NodeJobs node_jobs_from(const std::map<unsigned, std::vector<JobInfo>>& jobs_by_gpu);

}  // namespace gcm::processor
