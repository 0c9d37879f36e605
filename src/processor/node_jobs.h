// What slurm_processor adds to telemetry of one host: each GPU's job metadata as the reference's shelper
// SlurmMetadata (nine strings; several jobs on one GPU give sorted, comma-joined values), the same fields as
// lists over all GPUs of the host (GetGPUData: sorted unique values), and the host's job ids.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "attribution/job_info.h"
#include "attribution/slurmctld_jobs.h"

namespace gcm::processor {

// The attribute keys, in the reference's order.
inline constexpr std::array<const char*, 9> kJobKeys = {
    "job_id", "job_name", "qos", "array_job_id", "array_task_id", "username", "partition", "account", "num_nodes"};

using JobValues = std::array<std::string, 9>;  // values for kJobKeys, as they are made

// With the kubelet source (a processor on a Kubernetes node): the pod a GPU was given to, under the names of the
// labels gcm_gpu_job_info carries (nvml_monitor, gcm agent), so that a dashboard joins the two. Not among the
// reference's keys: a point gets them only when its GPU has a pod, and nothing changes without the kubelet source.
inline constexpr std::array<const char*, 3> kPodKeys = {"pod", "namespace", "container"};
using PodValues = std::array<std::string, 3>;  // values for kPodKeys ("" where the kubelet did not say)

// A job's values for kJobKeys, read-only, in one allocation: a cluster's table holds one for each of its ~20 000
// jobs (and one more for each GPU that several jobs share), where nine std::strings took 288 bytes before their text.
class JobFields {
 public:
  JobFields() : JobFields(JobValues()) {}
  explicit JobFields(const JobValues& values);
  std::string_view operator[](size_t key) const {
    size_t begin = key ? ends_[key - 1] : 0;
    return std::string_view(text_).substr(begin, ends_[key] - begin);
  }
  static constexpr size_t size() { return kJobKeys.size(); }
  bool operator==(const JobFields& other) const = default;

 private:
  std::string text_;                              // the values one after the other
  std::array<uint32_t, kJobKeys.size()> ends_{};  // where each ends in text_
};

struct NodeJobs {
  // The GPUs that hold a job, by index, in increasing order. Shared: the GPUs of one job (and, in a cluster table,
  // every node of it) point to the same fields.
  std::vector<std::pair<unsigned, std::shared_ptr<const JobFields>>> by_gpu;
  // Each job on the node once, its own fields (where a GPU holds several, by_gpu has them joined). The lists below
  // are made from these when a request asks, once per request: kept in the table they would be most of it (a node of
  // eight one-GPU jobs would hold 80 strings for them; the heap figures are in bench/README.md).
  std::vector<std::shared_ptr<const JobFields>> jobs;
  // The GPUs given to a pod (the kubelet source only), by index, in increasing order; a GPU may have a pod and no
  // Slurm job (a plain Kubernetes pod) or both (Slurm on Kubernetes).
  std::vector<std::pair<unsigned, PodValues>> pods_by_gpu;

  // Per key (an index into kJobKeys), the sorted unique non-empty values over all GPUs (views into `jobs`).
  std::vector<std::string_view> values(size_t key) const;
  std::array<std::vector<std::string_view>, 9> lists() const;  // values() of every key
  // The job ids, sorted (as text) and comma-joined: the resource attribute of logs and traces.
  std::string job_ids_joined() const;

  // The job fields of the GPU an item's `gpu` attribute names, null when that GPU holds no job. As text the index
  // is decimal as NVML and dcgm-exporter write it ("0", "12"); another spelling ("01", "+1", " 1") names no GPU.
  // Asked for every data point: a scan of a few integers, where a map of strings would cost a string compare per
  // level.
  const JobFields* gpu(std::string_view index) const;
  const JobFields* gpu(int64_t index) const;
  // The pod of GPU `index`, null when it has none.
  const PodValues* pod(int64_t index) const;
};

// A `gpu` attribute's text as a GPU index: decimal as NVML and dcgm-exporter write it, nullopt for any other
// spelling.
std::optional<int64_t> gpu_index_of(std::string_view index);

// Builds the table from the attribution's jobs per GPU index.
NodeJobs node_jobs_from(const std::map<unsigned, std::vector<JobInfo>>& jobs_by_gpu);

// Every node's table from one cluster answer. Nodes whose GPUs hold the same jobs share one table: the nodes of a
// multi-node job on whole nodes are hundreds of names for one table, which keeps a 12 500-node cluster's tables in
// a few megabytes.
// Hashed by node name: asked once per resource of every request, where a tree of 12 500 names cost a cache miss per
// level.
struct NodeNameHash {
  using is_transparent = void;
  size_t operator()(std::string_view name) const { return std::hash<std::string_view>()(name); }
};
using ClusterNodeJobs = std::unordered_map<std::string, std::shared_ptr<const NodeJobs>, NodeNameHash, std::equal_to<>>;
// `previous`: the table of the read before, if any. A node whose GPUs hold the same jobs with the same fields keeps
// its table from it (the same object): between two refreshes a few seconds apart nearly every node does, so a
// refresh makes tables only for the nodes that changed, instead of the whole cluster's again beside the old one.
ClusterNodeJobs cluster_node_jobs(const ClusterJobs& cluster, const ClusterNodeJobs* previous = nullptr);

}  // namespace gcm::processor
