// Reads what `dcgmi` prints: `diag -j` (JSON), `nvlink -e -j` (JSON) and `nvlink -s` (text), and turns each into a
// verdict with the reference's rules. Pure functions of the text, so they are unit-tested on recorded outputs and
// fuzzed.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "health/exit_code.h"

namespace gcm::health {

struct DcgmiVerdict {
  ExitCode code = ExitCode::OK;
  std::string msg;
};

// The reference's DCGM test names (valid --exclude_category values).
const std::set<std::string>& dcgm_diag_test_names();

// `dcgmi diag -j` output of DCGM 3.x ("DCGM GPU Diagnostic", per-GPU "gpu_ids") or 4.x ("DCGM Diagnostic",
// "entity_id" results and a "test_summary"): every test not excluded whose summary or result is Fail is CRITICAL,
// Warn at least WARNING. Exclusions match 3.x and 4.x spellings alike ("Targeted Stress" = "targeted_stress"). Unlike
// the reference (first result only) every per-GPU result counts, and the failing GPUs are named.
DcgmiVerdict evaluate_dcgmi_diag(std::string_view json, const std::set<std::string>& excluded);

struct NvlinkThresholds {
  int64_t data = 0, flit = 0, recovery = 0, replay = 0;
};
// `dcgmi nvlink -e -j -g <gpu>` output of one GPU: a counter above its threshold is CRITICAL.
DcgmiVerdict evaluate_dcgmi_nvlink_errors(std::string_view json, const NvlinkThresholds& t);

// `dcgmi nvlink -s` output: any link Down (D) or Disabled (X) is CRITICAL, named by its gpuId line.
DcgmiVerdict evaluate_dcgmi_nvlink_status(std::string_view text);

}  // namespace gcm::health
