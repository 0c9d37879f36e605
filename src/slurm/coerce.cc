#include "slurm/coerce.h"

#include <charconv>
#include <cmath>

#include "core/ascii.h"

namespace gcm::slurm {

namespace {

// Python allows one '_' between two digits ("1_000"); returns the text without them, or nullopt when an '_' is
// misplaced.
std::optional<std::string> without_digit_separators(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (i == 0 || i + 1 == s.size() || !is_ascii_digit(s[i - 1]) || !is_ascii_digit(s[i + 1])) return std::nullopt;
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

// The common start of Python's int() and float(): blanks trimmed, one sign taken off, '_' separators removed
// (into storage). Returns whether the number is negative, or nullopt when a separator is misplaced.
std::optional<bool> number_body(std::string_view& text, std::string& storage) {
  text = ascii_trim(text);
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.find('_') != std::string_view::npos) {
    auto cleaned = without_digit_separators(text);
    if (!cleaned) return std::nullopt;
    storage = std::move(*cleaned);
    text = storage;
  }
  return negative;
}

}  // namespace

bool is_null_like(std::string_view value) {
  value = ascii_trim(value);
  return value.empty() || value == "N/A" || value == "Unknown" || value == "(null)" || value == "None";
}

std::optional<int64_t> python_int(std::string_view text) {
  std::string cleaned;
  std::optional<bool> negative = number_body(text, cleaned);
  if (!negative || text.empty() || !is_ascii_digit(text.front())) return std::nullopt;
  uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), magnitude);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (*negative) {
    if (magnitude > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - magnitude);
  }
  if (magnitude > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(magnitude);
}

std::optional<double> python_float(std::string_view text) {
  std::string cleaned;
  std::optional<bool> negative = number_body(text, cleaned);
  // from_chars would accept a second sign and "nan(...)" forms; Python accepts neither.
  if (!negative || text.empty() || text.front() == '+' || text.front() == '-' ||
      text.find('(') != std::string_view::npos)
    return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  // A value beyond double's range is inf in Python (float("1e999") == inf); from_chars reports it as out of range.
  if (ec == std::errc::result_out_of_range && end == text.data() + text.size()) {
    bool tiny = text.find_first_of("eE") != std::string_view::npos &&
                text.find('-', text.find_first_of("eE")) != std::string_view::npos;
    v = tiny ? 0.0 : HUGE_VAL;
  } else if (ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return *negative ? -v : v;
}

int64_t strict_int(std::string_view text) {
  if (auto v = python_int(text)) return *v;
  throw ParseError(describe_bad_value("integer", text, "not a whole number"));
}

int64_t non_negative_int(std::string_view text) {
  int64_t v = strict_int(text);
  if (v < 0) throw ParseError(describe_bad_value("non-negative integer", text, "is negative"));
  return v;
}

int64_t parse_scontrol_maxnodes(std::string_view text) {
  if (text.empty()) return -1;
  for (char c : text) {
    if (!is_ascii_digit(c)) return -1;
  }
  return strict_int(text);
}

CpuStates parse_cpu_states(std::string_view text) {
  int64_t parts[4];
  size_t start = 0;
  for (int i = 0; i < 4; ++i) {
    size_t slash = text.find('/', start);
    bool last = i == 3;
    if (last != (slash == std::string_view::npos))
      throw ParseError(describe_bad_value("CPUS(A/I/O/T)", text, "expected four numbers separated by '/'"));
    std::string_view part = text.substr(start, last ? std::string_view::npos : slash - start);
    auto v = python_int(part);
    if (!v) throw ParseError(describe_bad_value("CPUS(A/I/O/T)", text, "expected four numbers separated by '/'"));
    parts[i] = *v;
    start = slash + 1;
  }
  return {parts[0], parts[1], parts[2], parts[3]};
}

std::vector<std::string_view> parse_job_ids(std::string_view text) {
  std::vector<std::string_view> ids;
  if (text.empty()) return ids;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    ids.push_back(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return ids;
}

double parse_abbreviated_float(std::string_view text) {
  if (text.empty()) throw ParseError(describe_bad_value("abbreviated number", text, "is empty"));
  double scale = 1;
  std::string_view number = text;
  switch (text.back()) {
    case 'K':
      scale = 1e3;
      break;
    case 'M':
      scale = 1e6;
      break;
    case 'G':
      scale = 1e9;
      break;
    default:
      if (!is_ascii_digit(text.back()))
        throw ParseError(describe_bad_value("abbreviated number", text, "expected a K, M or G suffix or a digit"));
  }
  if (scale != 1) number.remove_suffix(1);
  auto v = python_float(number);
  if (!v) throw ParseError(describe_bad_value("abbreviated number", text, "not a number"));
  return *v * scale;
}

}  // namespace gcm::slurm
