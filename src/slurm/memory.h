// Memory sizes as Slurm prints them ("16G", "0.125G", "32500000M", "1792G", bytes without a suffix), converted to
// the reference's unit: decimal megabytes (gcm-reference.md §1.9 convert_memory_to_mb).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "slurm/parse_error.h"

namespace gcm::slurm {

// "" and "0" -> 0. A trailing digit means bytes: int(bytes * 1e-6). Otherwise the number before the suffix, as a
// float, times P 1e9, T 1e6, G 1e3, M 1, K 1e-3, truncated toward zero ("0.125G" -> 125, "10.5G" -> 10500,
// "1T" -> 1000000, "1500K" -> 1).
// Decimal factors although Slurm means binary units: the reference's records are in these units, and dashboards
// built on them must keep working.
// design.md §5 fix: the K suffix is accepted (the reference raised ValueError on it, dropping the whole record).
// Any other suffix (lower case included), an unparsable number or a result beyond int64 throws ParseError.
int64_t convert_memory_to_mb(std::string_view value);

// The newer reference's maybe_parse_memory_to_bytes (gcm-newer.md §1.6, JobData MIN_MEMORY): decimal bytes.
// "", "N/A" and "(null)" -> nullopt (Slurm prints them for a job with no memory request). A number without a unit is
// megabytes (squeue's unit), times 1e6. Otherwise the number before the suffix times K 1e3, M 1e6, G 1e9, T 1e12,
// P 1e15, truncated toward zero ("0.125G" -> 125000000). Anything else, or a result beyond int64, throws ParseError.
std::optional<int64_t> memory_to_bytes(std::string_view value);

}  // namespace gcm::slurm
