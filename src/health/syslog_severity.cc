#include "health/syslog_severity.h"

#include <cctype>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gcm::health {

namespace {

// Position of `needle` (lower case) in `hay`, ignoring case, from `from`; npos when absent.
size_t find_ci(std::string_view hay, std::string_view needle, size_t from = 0) {
  if (needle.size() > hay.size()) return std::string_view::npos;
  for (size_t i = from; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() &&
           std::tolower(static_cast<unsigned char>(hay[i + k])) == static_cast<unsigned char>(needle[k]))
      ++k;
    if (k == needle.size()) return i;
  }
  return std::string_view::npos;
}

bool has_ci(std::string_view hay, std::string_view needle) { return find_ci(hay, needle) != std::string_view::npos; }

// One row of a table: the line contains `first` and, when `then` is set, `then` somewhere after it (GCM's one
// regex with ".*", "temperature.*normal").
struct Pattern {
  std::string_view first, then;
  ExitCode code;
  bool matches(std::string_view line) const {
    size_t at = find_ci(line, first);
    if (at == std::string_view::npos) return false;
    return then.empty() || find_ci(line, then, at + first.size()) != std::string_view::npos;
  }
};

// GCM's MCE_SEVERITY_PATTERNS, in its order (lower case: matched ignoring case).
constexpr Pattern kMce[] = {
    {"[hardware error]", "", ExitCode::CRITICAL},
    {"processor context corrupt", "", ExitCode::CRITICAL},
    {"machine check exception", "", ExitCode::CRITICAL},
    {"uncorrected error", "", ExitCode::CRITICAL},
    {"fatal error", "", ExitCode::CRITICAL},
    {"corrected error", "", ExitCode::WARN},
    {"temperature above threshold", "", ExitCode::WARN},
    {"cpu clock throttled", "", ExitCode::WARN},
    {"cmci storm", "", ExitCode::WARN},
    {"temperature", "normal", ExitCode::OK},
    {"cpu is offline", "", ExitCode::OK},
    {"disabling lock", "", ExitCode::OK},
};

// GCM's PCIE_AER_SEVERITY_PATTERNS (pcie_severity.py, the table check-syslogs pcie-aer uses).
constexpr Pattern kAer[] = {
    {"uncorrectable (fatal)", "", ExitCode::CRITICAL},
    {"can't recover", "", ExitCode::CRITICAL},
    {"uncorrectable", "", ExitCode::WARN},
    {"corrected error", "", ExitCode::OK},
};

// Lines every healthy x86 node prints at boot that GCM's table does not know, and so would call WARNING on every
// Intel (thermal monitoring) or AMD (EDAC's decoder) node: the project's addition, informational, consulted only
// after GCM's table (README, "Differences from GCM").
constexpr Pattern kMceBootNotices[] = {
    {"thermal monitoring enabled", "", ExitCode::OK},
    {"in-kernel mce decoding enabled", "", ExitCode::OK},
    {"machine check injector initialized", "", ExitCode::OK},
    {"mce banks", "", ExitCode::OK},  // "mce: Using 32 MCE banks" (older kernels)
};

// The first row of `table` that matches, or nullopt.
template <size_t N>
std::optional<ExitCode> first_match(const Pattern (&table)[N], std::string_view line) {
  for (const Pattern& p : table)
    if (p.matches(line)) return p.code;
  return std::nullopt;
}

}  // namespace

bool is_mce_report_line(std::string_view line) { return has_ci(line, "mce:") || has_ci(line, "machine check"); }

bool is_pcie_aer_report_line(std::string_view line) {
  size_t at = line.find("AER");
  return at != std::string_view::npos && line.find("error", at + 3) != std::string_view::npos;
}

ExitCode classify_mce_line(std::string_view line) {
  if (auto c = first_match(kMce, line)) return *c;
  return first_match(kMceBootNotices, line).value_or(ExitCode::WARN);
}
ExitCode classify_pcie_aer_line(std::string_view line) { return first_match(kAer, line).value_or(ExitCode::WARN); }

void SeverityTally::add(ExitCode c) {
  if (c == ExitCode::CRITICAL)
    ++critical;
  else if (c == ExitCode::WARN)
    ++warn;
  else
    ++info;
}

ExitCode SeverityTally::code() const {
  if (critical) return ExitCode::CRITICAL;
  if (warn) return ExitCode::WARN;
  return ExitCode::OK;
}

std::string SeverityTally::detail() const {
  std::vector<std::string> parts;
  if (critical) parts.push_back(fmt::format("critical={}", critical));
  if (warn) parts.push_back(fmt::format("warn={}", warn));
  if (info) parts.push_back(fmt::format("info={}", info));
  return fmt::format("({})", fmt::join(parts, ", "));
}

}  // namespace gcm::health
