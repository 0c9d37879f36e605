// Slurm timestamps ("2024-01-02T03:04:05", naive local time) and the reference's time_to_time_aware (§1.9): the
// words "Unknown", "None" and "N/A" pass through; anything else is an ISO-8601 date-time, a naive one read in the
// host's zone, then shown in a target zone as "YYYY-MM-DDTHH:MM:SS±HH:MM".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/time_zone.h"
#include "slurm/parse_error.h"

namespace gcm::slurm {

// An instant and the UTC offset it is written with.
struct Timestamp {
  int64_t unix_seconds = 0;
  int32_t microseconds = 0;  // 0..999999
  int32_t offset_seconds = 0;
  friend bool operator==(const Timestamp&, const Timestamp&) = default;
};

// True for the values the reference passes through untouched: "Unknown", "None", "N/A".
bool is_unset_time(std::string_view text);

// Python 3.11's datetime.fromisoformat on the extended forms Slurm and the reference produce:
// "YYYY-MM-DD", optionally followed by 'T' or ' ' and "HH[:MM[:SS[.f...]]]", optionally followed by "Z" or
// "±HH[:MM[:SS]]" / "±HHMM". A value without an offset is wall-clock time in naive_zone.
// Throws ParseError for anything else, "" included.
Timestamp parse_timestamp(std::string_view text, const TimeZone& naive_zone);

// The same instant written with zone's offset at that instant.
Timestamp in_zone(const Timestamp& t, const TimeZone& zone);

// Python's isoformat(): "YYYY-MM-DDTHH:MM:SS[.ffffff]±HH:MM[:SS]".
std::string format_iso(const Timestamp& t);
// "YYYY-MM-DD" of the local date (the reference's ds / end_ds).
std::string format_date(const Timestamp& t);
// The instant as naive wall-clock time in zone, "YYYY-MM-DDTHH:MM:SS": how Slurm's commands print times.
std::string format_naive(int64_t unix_seconds, const TimeZone& zone);

// time_to_time_aware(text, tz): is_unset_time values unchanged, otherwise parse (naive values in naive_zone, the
// host zone in the reference), convert to target and format. Throws ParseError.
std::string time_to_time_aware(std::string_view text, const TimeZone& target, const TimeZone& naive_zone);

// For numeric work: the instant in unix seconds, nullopt for null-like values ("", "Unknown", "None", "N/A",
// "(null)"). Throws ParseError for anything else that is not a timestamp.
std::optional<int64_t> parse_unix_time(std::string_view text, const TimeZone& naive_zone);

}  // namespace gcm::slurm
