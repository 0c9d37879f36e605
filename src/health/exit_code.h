// Nagios plugin exit codes and the reference's aggregation order, in which UNKNOWN ranks lowest: a check starts at
// UNKNOWN and takes the worst of its sub-results, so a check that ran nothing exits 3.
#pragma once

#include <optional>
#include <string_view>

namespace gcm::health {

enum class ExitCode { OK = 0, WARN = 1, CRITICAL = 2, UNKNOWN = 3 };

// Rank in the aggregation order UNKNOWN < OK < WARN < CRITICAL.
int severity_rank(ExitCode c);
// The worse of two results in that order.
ExitCode worse(ExitCode a, ExitCode b);
// "OK", "WARNING", "CRITICAL", "UNKNOWN": the status word of the stdout line.
const char* status_word(ExitCode c);
// 0..3 -> ExitCode; nullopt otherwise.
std::optional<ExitCode> exit_code_from_int(int v);

// How the check was started: the positional TYPE.
enum class CheckType { Prolog, Epilog, Nagios, App };
std::optional<CheckType> parse_check_type(std::string_view s);
const char* to_string(CheckType t);

}  // namespace gcm::health
