// Generic resources: "gpu:ampere:8(IDX:0-7)", "gpu:8", "gpu:a100:2(S:0-1)", "gpu:2(IDX:0,2)", "(null)", and
// comma-separated lists of several ("gpu:a100:8(S:0-1),nic:1"). sinfo GRES/GRES_USED, scontrol show node
// Gres=/GresUsed=, scontrol show job -d GRES=, squeue TRES-PER-NODE ("gres/gpu:8").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/parse_error.h"

namespace gcm::slurm {

struct Gres {
  std::string name;                // "gpu" (a leading "gres:" or "gres/" is dropped)
  std::string type;                // "ampere", "nvidia_a100-sxm4-80gb", "a100_3g.20gb"; empty when not given
  std::vector<std::string> flags;  // further ':' fields between type and count ("no_consume"), rarely present
  int64_t count = 0;               // 1 when not given (Slurm's default), or the number of IDX entries when only
                                   // indices are given ("gpu(IDX:0-1)" -> 2)
  std::vector<int> indices;        // (IDX:0-2,4) -> 0 1 2 4; empty for IDX:N/A or none
  std::vector<int> sockets;        // (S:0-1) -> 0 1: socket affinity, not device indices
  friend bool operator==(const Gres&, const Gres&) = default;
};

// Parses a GRES list with Slurm's grammar:
//   list  := "" | "(null)" | "N/A" | gres ("," gres)*        commas inside parentheses belong to the gres
//   gres  := ["gres:" | "gres/"] name (":" field)* ["(" detail ("," detail)* ")"]
//   field := [A-Za-z0-9_.-]+; the last field is the count when it is all digits, the first other field is the
//            type, any others are flags
//   detail:= key ":" (numbers and ranges "0-2,4" | "N/A" | "")   key "IDX" (indices), "S" (sockets); other keys
//            are skipped, so a newer Slurm's extra details do not break parsing
// Blanks around items are ignored. Throws ParseError naming the item for anything else.
std::vector<Gres> parse_gres_list(std::string_view text);

// Sum of the counts of every entry named name.
int64_t gres_count(const std::vector<Gres>& list, std::string_view name = "gpu");
// Every IDX index of entries named name, in order (a job's GPU indices on a node).
std::vector<int> gres_indices(const std::vector<Gres>& list, std::string_view name = "gpu");

// JobData GRES_GPU_INDICES (gcm-newer.md §1.6) from a job's gres_detail (slurmrestd: one GRES string per allocated
// node): the GPU indices of its single node joined by ',' ("gpu:ampere:4(IDX:0-3)" -> "0,1,2,3"); nullopt for a
// job on several nodes or none, or when the node's GRES names no GPU index. Throws ParseError for a malformed GRES.
std::optional<std::string> gres_detail_gpu_indices(const std::vector<std::string>& gres_detail);

// shelper's parseGRES (§4.1) on one value: the indices of "(IDX:...)" in order, [] when there is no
// parenthesis. Non-numeric items are skipped as shelper does ("gpu:ampere:1(IDX:)" -> []).
std::vector<int> shelper_gres_indices(std::string_view gres);

// --- The reference's GPU counters (§1.9), kept exactly for record compatibility. ---

// parse_gres: "N/A" or "(null)" -> 0; a leading "gres:"/"gres/" is dropped; then "gpu:", any number of
// "[A-Za-z0-9]+:" type fields, and at least one digit; whatever follows is ignored ("gpu:volta:8(S:0-1)" -> 8).
// Throws ParseError for "", "gpu:", "gpu::8", "laser:1", "tpu:2".
// Difference from the reference (design.md §5 style fix): type fields may contain '_', '.' and '-'
// ("gpu:nvidia_a100-sxm4-80gb:8" -> 8, "gpu:a100_3g.20gb:1" -> 1), as NVML autodetection names them; the
// reference's regex rejected them, which aborted a whole collection round on such clusters.
int64_t gres_gpu_count(std::string_view value);

// parse_tres (for TRES-PER-NODE): "N/A", "(null)" -> 0; a leading "gres:"/"gres/" is dropped; then "gpu:<digits>".
// Throws ParseError otherwise.
int64_t tres_per_node_gpu_count(std::string_view value);

// parse_gres_or_tres: gres_gpu_count, else tres_per_node_gpu_count, else 0; never throws.
int64_t gres_or_tres_gpu_count(std::string_view value) noexcept;

// extract_gpus_from_gres: split on ','; the last item starting with "gpu:" decides (gres_gpu_count, which may
// throw); 0 when none does.
int64_t gpus_in_gres_list(std::string_view value);

}  // namespace gcm::slurm
