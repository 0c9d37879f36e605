// What slurm_processor adds to telemetry of one host: each GPU's job metadata as the reference's shelper
// SlurmMetadata (nine strings; several jobs on one GPU give sorted, comma-joined values), the same fields as
// lists over all GPUs of the host (GetGPUData: sorted unique values), and the host's job ids.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attribution/job_info.h"
#include "attribution/slurmctld_jobs.h"

namespace gcm::processor {

// The attribute keys, in the reference's order.
inline constexpr std::array<const char*, 9> kJobKeys = {
    "job_id", "job_name", "qos", "array_job_id", "array_task_id", "username", "partition", "account", "num_nodes"};

using JobFields = std::array<std::string, 9>;  // values for kJobKeys

struct NodeJobs {
  // GPU index as text ("0", "1", ...). Shared: the GPUs of one job (and, in a cluster table, every node of it)
  // point to the same fields.
  std::map<std::string, std::shared_ptr<const JobFields>, std::less<>> by_gpu;
  std::array<std::vector<std::string>, 9> lists;  // per key, sorted unique non-empty values over all GPUs
  std::vector<std::string> job_ids;               // sorted unique
  std::string job_ids_joined;                     // comma-joined, for the resource attribute of logs and traces
};

// Builds the table from the attribution's jobs per GPU index.
NodeJobs node_jobs_from(const std::map<unsigned, std::vector<JobInfo>>& jobs_by_gpu);

// Every node's table from one cluster answer. Nodes whose GPUs hold the same jobs share one table: the nodes of a
// multi-node job on whole nodes are hundreds of names for one table, which keeps a 12 500-node cluster's tables in
// a few megabytes.
using ClusterNodeJobs = std::map<std::string, std::shared_ptr<const NodeJobs>, std::less<>>;
ClusterNodeJobs cluster_node_jobs(const ClusterJobs& cluster);

}  // namespace gcm::processor
