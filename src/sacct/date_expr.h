// The dates fsacct and sacct_backfill accept, parsed in process (the reference ran GNU `date -d` once per value or
// batch): the subset of `date -d` that Slurm tooling uses.
//   - ISO 8601: "2021-04-07", "2021-04-07T23:57:00", "2021-04-07 23:57", with "Z" or "±HH:MM" (naive = local zone)
//   - "@1617861420" (unix seconds)
//   - "now", "today" (both the current time, as in date -d), "yesterday", "tomorrow"
//   - relative items after an optional base: "3 hours ago", "30 min ago", "-2 days", "+1 week", "1 month ago",
//     "2021-04-07 +2 hours"; units sec/second, min/minute, hour, day, week, fortnight, month, year (plurals too);
//     "ago" negates what precedes it. Days and longer are calendar steps in the local zone (as date -d does).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/time_zone.h"

namespace gcm::sacct {

// Unix seconds of text; now is the current instant. Throws slurm::ParseError naming the value.
int64_t parse_date_expr(std::string_view text, int64_t now, const TimeZone& zone);

// "YYYY-MM-DDTHH:MM:SS" in zone, without offset (what fsacct hands to sacct).
std::string naive_local_iso(int64_t unix_seconds, const TimeZone& zone);
// "YYYY-MM-DDTHH:MM:SS±HH:MM" in zone (what sacct_backfill hands to fsacct).
std::string offset_iso(int64_t unix_seconds, const TimeZone& zone);

}  // namespace gcm::sacct
