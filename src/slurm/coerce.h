// Scalar coercions of Slurm output fields, with the reference's rules (gcm-reference.md §1.9). Numbers follow
// Python's int()/float() on text, because that is what the reference applies: surrounding blanks, a sign and '_'
// between digits are accepted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/parse_error.h"

namespace gcm::slurm {

// Slurm's spellings of "no value": "", "N/A", "Unknown", "(null)", "None" (after trimming blanks). Collectors use it
// to turn such fields into nulls; the reference handles them field by field, so the typed parsers below say which
// they accept.
bool is_null_like(std::string_view value);

// Python's int(text); nullopt when Python would raise. Values outside int64 are nullopt too (Python's integers are
// unbounded; no Slurm field is that large).
std::optional<int64_t> python_int(std::string_view text);
// Python's float(text) (including "inf" and "nan"); nullopt when Python would raise.
std::optional<double> python_float(std::string_view text);

// maybe_int / maybe_float: the number, or nullopt ("N/A", "0 sec", "", "UNLIMITED" -> nullopt).
inline std::optional<int64_t> maybe_int(std::string_view text) { return python_int(text); }
inline std::optional<double> maybe_float(std::string_view text) { return python_float(text); }

// int(text); throws ParseError when not an integer.
int64_t strict_int(std::string_view text);
// non_negative_int: int(text) and >= 0, else ParseError.
int64_t non_negative_int(std::string_view text);

// parse_scontrol_maxnodes: -1 unless every character is a digit ("UNLIMITED" -> -1, "" -> -1), else the number.
// Digits beyond int64 throw ParseError (Python's integers had no bound).
int64_t parse_scontrol_maxnodes(std::string_view text);

// sinfo's CPUS(A/I/O/T) ("80/0/0/80"): allocated, idle, other, total. Throws ParseError.
struct CpuStates {
  int64_t allocated = 0, idle = 0, other = 0, total = 0;
};
CpuStates parse_cpu_states(std::string_view text);

// parse_job_ids: text split on ',' (empty items kept, as str.split does); [] for "".
std::vector<std::string_view> parse_job_ids(std::string_view text);

// parse_abbreviated_float: a trailing K (x1e3), M (x1e6) or G (x1e9), or a plain number. Throws ParseError.
double parse_abbreviated_float(std::string_view text);

}  // namespace gcm::slurm
