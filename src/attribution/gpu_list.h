// GPU index lists as Slurm and CUDA write them in job environments: "0,1,3", "0-3,6" (SLURM_JOB_GPUS can carry
// ranges), "GPU-<uuid>,..." (CUDA_VISIBLE_DEVICES may name UUIDs, which say nothing about indices and are skipped).
#pragma once

#include <string_view>
#include <vector>

namespace gcm {

// Indices in order of appearance, duplicates removed; non-numeric items are skipped.
std::vector<unsigned> parse_gpu_index_list(std::string_view list);

}  // namespace gcm
