// The GPU -> job mapping files the prolog writes and the epilog removes: DIR/<gpu index> holding the job id, the
// layout attribution's `mapping-files` source (src/attribution/gpu_jobs.h) and dcgm-exporter's
// --hpc-job-mapping-dir read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gcm::suite {

// The job's physical GPU indices: SLURM_JOB_GPUS, else SLURM_STEP_GPUS, else GPU_DEVICE_ORDINAL (never
// CUDA_VISIBLE_DEVICES, which is renumbered from 0 in device-constrained jobs). Empty when none is set.
std::vector<unsigned> job_gpus_from_environment();

// Writes DIR/<gpu> = "<job_id>\n" for each GPU (atomically: a reader never sees half a file); creates DIR (0755).
// Throws std::runtime_error naming the file on failure.
void write_mapping_files(const std::string& dir, int64_t job_id, const std::vector<unsigned>& gpus);

// Removes the files of DIR that hold job_id (those of `gpus`, or every file of DIR when gpus is empty); a file
// that another job took over meanwhile is left alone. Returns how many were removed.
size_t remove_mapping_files(const std::string& dir, int64_t job_id, const std::vector<unsigned>& gpus);

}  // namespace gcm::suite
