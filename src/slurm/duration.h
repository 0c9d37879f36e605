// Slurm durations: "D-HH:MM:SS", "HH:MM:SS", "MM:SS", "MM:SS.mmm" (sacct's TotalCPU/UserCPU/SystemCPU), and the
// words UNLIMITED, INVALID and Partition_Limit (squeue/sinfo time limits).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "slurm/parse_error.h"

namespace gcm::slurm {

struct Duration {
  enum class Kind { Finite, Unlimited, Invalid, PartitionLimit };
  Kind kind = Kind::Finite;
  int64_t milliseconds = 0;  // Finite only
  bool finite() const { return kind == Kind::Finite; }
  int64_t seconds() const { return milliseconds / 1000; }
  friend bool operator==(const Duration&, const Duration&) = default;
};

// The reference's splitting (elapsed_string_to_seconds): '-' counts as ':', the fields are right-aligned onto
// days, hours, minutes, seconds (so "5" is five seconds and "1-02:03:04" is 93784 s), at most four fields, each
// all digits. Beyond the reference: the seconds may carry a fraction ("01:02.345" -> 62345 ms; more than three
// digits are truncated), and the words above (any letter case) give their Kind.
// nullopt for null-like values ("", "N/A", "None", "(null)", "Unknown"); ParseError for anything else.
std::optional<Duration> parse_duration(std::string_view text);

// The reference's elapsed_string_to_seconds exactly: whole seconds; throws ParseError for fractions, words and
// empty text, as int() did.
int64_t elapsed_string_to_seconds(std::string_view text);

}  // namespace gcm::slurm
