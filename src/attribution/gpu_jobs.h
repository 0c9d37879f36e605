// GPU -> Slurm job attribution on the GPU node. Sources, tried in the order given; for each GPU the first source
// that knows its job wins:
//   nvml-processes  the GPU's compute processes (all of them, not only the first) -> /proc/<pid>/environ
//   slurmd-local    `scontrol listpids` -> each job's environment (SLURM_JOB_GPUS, ...): GPUs with no process too
//   slurmctld       `scontrol listpids`, then `scontrol show job -d <id>`: this node's GRES IDX, full metadata
//   cgroup          the job cgroup of the GPU's processes; with cgroup v1 also the jobs' device allow-lists
//   mapping-files   a directory with one file per GPU index holding the job id (the layout a prolog writes and
//                   dcgm-exporter's --hpc-job-mapping-dir reads)
//   kubelet         the kubelet's pod-resources API: the pod, namespace and container of each GPU. It does not
//                   compete with the others: its pods are added to the GPU's jobs (Slurm on Kubernetes: both), or
//                   stand alone where no source knows a Slurm job.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "attribution/job_info.h"
#include "attribution/kubelet_pods.h"
#include "gpu/gpu_sampler.h"

namespace gcm {

struct AttributionOptions {
  std::vector<std::string> sources = {"nvml-processes"};
  std::string procfs = "/proc";
  std::string cgroupfs = "/sys/fs/cgroup";
  std::string mapping_dir;  // for mapping-files
  std::string scontrol = "scontrol";
  std::string slurm_node;  // slurmd-local where several slurmd share a host; slurmctld (default: short hostname)
  std::string slurmctld_cache_file;
  std::chrono::seconds slurmctld_cache_duration{0};
  std::chrono::milliseconds command_timeout{10000};
  KubeletAttributionOptions kubelet;
};

// The source names, for help texts and validation.
const std::vector<std::string>& attribution_source_names();
// Throws std::invalid_argument naming an unknown source.
void check_attribution_sources(const std::vector<std::string>& sources);

// Jobs per GPU index, each GPU's jobs in order of first appearance (several jobs may share a GPU). A source that
// fails (scontrol missing or timing out) is skipped; its error is appended to `errors` when given.
std::map<unsigned, std::vector<JobInfo>> attribute_gpus(const std::vector<DeviceResult>& devices,
                                                        const AttributionOptions& opts,
                                                        std::vector<std::string>* errors = nullptr);

// Adds the kubelet's containers of a GPU to its jobs: each job gains the first pod; without jobs, one JobInfo per
// pod (no job id).
void add_pods(std::vector<JobInfo>& jobs, const std::vector<PodAssignment>& pods);

// Jobs of one GPU from its processes' environments.
std::vector<JobInfo> jobs_from_processes(const std::vector<GpuProcess>& processes, const std::string& procfs);
// The job id in <dir>/<gpu index>, if the file exists and holds a number.
std::optional<JobInfo> job_from_mapping_file(const std::string& dir, unsigned gpu);

}  // namespace gcm
