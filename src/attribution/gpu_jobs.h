// GPU -> Slurm job attribution from the GPU node itself. Sources (tried in the order given, the first that knows a
// GPU's job wins for that GPU):
//   nvml-processes  the GPU's compute processes (all of them, not only the first) -> /proc/<pid>/environ
//   mapping-files   a directory with one file per GPU index holding the job id (the layout a prolog writes and
//                   dcgm-exporter's --hpc-job-mapping-dir reads); finds jobs whose GPUs have no process yet
#pragma once

#include <map>
#include <string>
#include <vector>

#include "attribution/job_info.h"
#include "gpu/gpu_sampler.h"

namespace gcm {

struct AttributionOptions {
  std::vector<std::string> sources = {"nvml-processes"};
  std::string procfs = "/proc";
  std::string mapping_dir;  // for mapping-files
};

// Validates source names; throws std::invalid_argument naming an unknown one.
void check_attribution_sources(const std::vector<std::string>& sources);

// Jobs per GPU index, each GPU's jobs in order of first appearance (several jobs may share a GPU).
std::map<unsigned, std::vector<JobInfo>> attribute_gpus(const std::vector<DeviceResult>& devices,
                                                        const AttributionOptions& opts);

// Jobs of one GPU from its processes' environments.
std::vector<JobInfo> jobs_from_processes(const std::vector<GpuProcess>& processes, const std::string& procfs);
// The job id in <dir>/<gpu index>, if the file exists and holds a number.
std::optional<JobInfo> job_from_mapping_file(const std::string& dir, unsigned gpu);

}  // namespace gcm
