// The Slurm version as `sinfo -V` prints it, for the choices that depend on it (23.02 and later have
// `sdiag --json`).
#pragma once

#include <string_view>
#include <utility>

namespace gcm::slurm {

// "slurm-wlm 22.05.8", "slurm 24.11.4" -> (22, 5). Throws slurm::ParseError.
std::pair<int, int> parse_slurm_version(std::string_view text);

}  // namespace gcm::slurm
