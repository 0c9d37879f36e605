// Bounds of the options that take seconds. Without an upper bound, 1e300 seconds overflows the conversion to
// milliseconds (undefined behaviour, in practice a negative or tiny wait); without a lower bound, `--interval 0`
// turns a daemon into a busy loop (25 000 rounds in 3 s). Each bound is a second check after the option's usual
// one (PositiveNumber, NonNegativeNumber), with no description of its own, so that --help keeps the reference's
// type names; the help text of the option states the bound.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace gcm {

// The longest wait, timeout or interval any option accepts: 366 days.
inline constexpr double kMaxOptionSeconds = 366.0 * 24 * 3600;
// The shortest sampling period (nvml_monitor --collect-interval, --push-interval): 10 ms.
inline constexpr double kMinSamplingSeconds = 0.01;
// The shortest period of a daemon's rounds (--interval): 1 s.
inline constexpr double kMinRoundSeconds = 1;

// The largest size in MiB any option accepts (1 TiB): more would overflow the conversion to bytes.
inline constexpr double kMaxOptionMebibytes = 1024.0 * 1024;
// A size in MiB of at most 1 TiB (its PositiveNumber check refuses 0 and less).
CLI::Validator mebibytes_at_most_a_tebibyte();

// Seconds in [min_s, kMaxOptionSeconds]; the message names what was expected.
CLI::Validator seconds_between(double min_s, const std::string& what);

// A wait that may be 0 (no wait), or a timeout (its PositiveNumber check refuses 0): at most 366 days.
inline CLI::Validator seconds_or_zero() { return seconds_between(0, "0"); }
inline CLI::Validator timeout_seconds() { return seconds_between(0, "more than 0"); }
// The period of a daemon's rounds: 1 s to 366 days.
inline CLI::Validator round_interval_seconds() { return seconds_between(kMinRoundSeconds, "1 second"); }
// A sampling period: 10 ms to 366 days.
inline CLI::Validator sampling_seconds() { return seconds_between(kMinSamplingSeconds, "0.01 seconds"); }

}  // namespace gcm
