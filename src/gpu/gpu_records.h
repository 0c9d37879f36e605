// The records nvml_monitor emits: the reference's DevicePlusJobMetrics (LOG), IndexedDeviceMetrics (METRIC, one per
// GPU, with every extended field), HostMetrics (METRIC) and the GPU -> job join series (METRIC).
#pragma once

#include <string>
#include <vector>

#include "core/record.h"
#include "gpu/gpu_sampler.h"
#include "slurm/job_info.h"

namespace gcm {

extern const LazySchema kDevicePlusJobMetrics;
extern const LazySchema kIndexedDeviceMetrics;
extern const LazySchema kHostMetrics;
extern const LazySchema kGpuJobInfo;

// One GPU's METRIC record from a sample; a GPU that is not Ok gets `up` 0, its state and nothing else measured.
// `uuid` is the GPU's UUID from an earlier sample when this one has none (a lost GPU keeps its identity).
Record device_metrics_record(const DeviceResult& r, const std::string& hostname, const std::string& driver_version,
                             const std::optional<std::string>& known_uuid);

// Folds `next` into `acc` (the reference's max over the push window): numbers keep the maximum, null is the
// identity, everything else takes the latest non-null value.
void max_merge(Record& acc, const Record& next);

// The LOG record of one GPU: the window's reference fields plus the job.
Record device_plus_job_record(const Record& metrics, const JobInfo& job, unsigned gpu_id, const std::string& hostname);

Record job_info_record(unsigned gpu, const std::optional<std::string>& uuid, const JobInfo& job);

// The reference's HostMetrics, with design.md's fix: 0 % GPUs count (only GPUs without a value are left out).
Record host_metrics_record(const std::vector<Record>& devices, std::optional<double> ram_util);

// used/total of RAM as `free` computes it (MemTotal - MemAvailable) from <procfs>/meminfo; nullopt if unreadable.
std::optional<double> read_ram_util(const std::string& procfs);

}  // namespace gcm
