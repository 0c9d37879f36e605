// Attribution source "cgroup": Slurm puts every job step in a cgroup named after the job (v1:
// /slurm/uid_<uid>/job_<id>/step_<n>, v2: /system.slice/slurmstepd.scope/job_<id>/step_<n>/...). A GPU process's
// /proc/<pid>/cgroup names its job even when its environment is unreadable or rewritten; with cgroup v1, a job's
// device allow-list (devices.list, "c 195:<minor> rwm") also names the GPUs it may use, process or not.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/job_info.h"
#include "gpu/gpu_sampler.h"

namespace gcm {

// The Slurm job id in a cgroup path ("/.../job_123/step_0/..."), if any.
std::optional<int64_t> job_id_from_cgroup_path(std::string_view path);
// The job of a process from <procfs>/<pid>/cgroup (any hierarchy line naming a job).
std::optional<int64_t> job_id_of_process(const std::string& procfs, uint32_t pid);
// NVIDIA GPU minor numbers (character device major 195) a v1 devices.list allows; "a *:* rwm" allows everything
// and yields nothing (no restriction says nothing about the job's GPUs).
std::vector<unsigned> nvidia_minors_in_devices_list(std::string_view devices_list);

struct CgroupOptions {
  std::string procfs = "/proc";
  std::string cgroupfs = "/sys/fs/cgroup";
};

// Jobs per GPU index: from the GPUs' processes, then (v1) from the jobs' device allow-lists, matching a GPU by its
// minor number (NVML's, else the index).
std::map<unsigned, std::vector<JobInfo>> attribute_cgroups(const std::vector<DeviceResult>& devices,
                                                           const CgroupOptions& opts);

}  // namespace gcm
