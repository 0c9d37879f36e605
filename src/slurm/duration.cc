#include "slurm/duration.h"

#include "core/ascii.h"
#include "slurm/coerce.h"

namespace gcm::slurm {

namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

[[noreturn]] void bad_duration(std::string_view text, std::string_view why) {
  throw ParseError(describe_bad_value("duration", text, why));
}

// Milliseconds of "[[[D-]H:]M:]S[.fff]"; fractions only when allow_fraction.
int64_t parse_clock(std::string_view text, bool allow_fraction) {
  constexpr int64_t kUnitMs[4] = {86400000, 3600000, 60000, 1000};  // days, hours, minutes, seconds
  std::string_view fields[4];
  size_t n = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ':' || text[i] == '-') {
      if (n == 4) bad_duration(text, "more than four fields");
      fields[n++] = text.substr(start, i - start);
      start = i + 1;
    }
  }
  int64_t total = 0;
  size_t first_unit = 4 - n;
  for (size_t i = 0; i < n; ++i) {
    std::string_view f = fields[i];
    int64_t fraction_ms = 0;
    bool last = i + 1 == n;
    size_t dot = f.find('.');
    if (dot != std::string_view::npos) {
      if (!allow_fraction || !last) bad_duration(text, "unexpected fraction");
      std::string_view frac = f.substr(dot + 1);
      if (frac.empty()) bad_duration(text, "empty fraction");
      int64_t scale = 100;
      for (char c : frac) {
        if (!is_ascii_digit(c)) bad_duration(text, "fraction is not digits");
        fraction_ms += (c - '0') * scale;
        scale /= 10;  // digits beyond milliseconds add nothing
      }
      f = f.substr(0, dot);
    }
    if (f.empty()) bad_duration(text, "empty field");
    for (char c : f) {
      if (!is_ascii_digit(c)) bad_duration(text, "fields must be digits");
    }
    auto v = python_int(f);
    int64_t unit = kUnitMs[first_unit + i];
    if (!v || *v > INT64_MAX / unit / 8) bad_duration(text, "out of range");
    total += *v * unit + fraction_ms;
  }
  return total;
}

}  // namespace

std::optional<Duration> parse_duration(std::string_view text) {
  if (is_null_like(text)) return std::nullopt;
  text = ascii_trim(text);
  Duration d;
  if (equals_ignoring_case(text, "UNLIMITED")) {
    d.kind = Duration::Kind::Unlimited;
  } else if (equals_ignoring_case(text, "INVALID")) {
    d.kind = Duration::Kind::Invalid;
  } else if (equals_ignoring_case(text, "Partition_Limit")) {
    d.kind = Duration::Kind::PartitionLimit;
  } else {
    d.milliseconds = parse_clock(text, true);
  }
  return d;
}

int64_t elapsed_string_to_seconds(std::string_view text) { return parse_clock(text, false) / 1000; }

}  // namespace gcm::slurm
