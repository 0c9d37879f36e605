// The three forms of a job report: a terminal's text, JSON (for scripts; every figure in base units), and a
// self-contained HTML page with a per-GPU timeline chart in inline SVG (no script, no font or style from elsewhere,
// so it opens from a mail attachment or a file share offline).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "jobstats/job_report.h"

namespace gcm::jobstats {

std::string render_text(const JobReport& r);
nlohmann::json render_json(const JobReport& r);
std::string render_html(const JobReport& r);

// The colours of the HTML timeline, by utilisation (the Chromium test looks for them in the screenshot).
// Busy (>= 50 %) lanes are dark blue, idle (< 1 %) light grey, in between a lighter blue; a slow or throttled
// sample is marked with a red bar under its lane.
inline constexpr const char* kColourBusy = "#1f4e9c";
inline constexpr const char* kColourPartial = "#8fb3e8";
inline constexpr const char* kColourIdle = "#d9d9d9";
inline constexpr const char* kColourSlow = "#d62728";

// "2026-12-01 14:02:00 UTC".
std::string format_time_utc(int64_t unix_seconds);

}  // namespace gcm::jobstats
