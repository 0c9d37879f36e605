#include "sacct/date_expr.h"

#include <cctype>
#include <chrono>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "slurm/parse_error.h"
#include "slurm/timestamp.h"

namespace gcm::sacct {

namespace {

[[noreturn]] void bad(std::string_view text, std::string_view why) {
  throw slurm::ParseError(fmt::format("invalid date '{}': {}", text, why));
}

enum class Unit { Second, Minute, Hour, Day, Week, Fortnight, Month, Year };

std::optional<Unit> unit_of(std::string word) {
  for (auto& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (word.size() > 1 && word.back() == 's' && word != "s") word.pop_back();
  if (word == "sec" || word == "second") return Unit::Second;
  if (word == "min" || word == "minute") return Unit::Minute;
  if (word == "hour") return Unit::Hour;
  if (word == "day") return Unit::Day;
  if (word == "week") return Unit::Week;
  if (word == "fortnight") return Unit::Fortnight;
  if (word == "month") return Unit::Month;
  if (word == "year") return Unit::Year;
  return std::nullopt;
}

std::optional<int64_t> integer(std::string_view w) {
  if (w.empty()) return std::nullopt;
  size_t i = (w[0] == '+' || w[0] == '-') ? 1 : 0;
  if (i == w.size() || w.size() - i > 12) return std::nullopt;
  int64_t v = 0;
  for (size_t k = i; k < w.size(); ++k) {
    if (w[k] < '0' || w[k] > '9') return std::nullopt;
    v = v * 10 + (w[k] - '0');
  }
  return w[0] == '-' ? -v : v;
}

struct Relative {
  int64_t seconds = 0, days = 0, months = 0;
  void add(Unit u, int64_t n) {
    switch (u) {
      case Unit::Second:
        seconds += n;
        break;
      case Unit::Minute:
        seconds += 60 * n;
        break;
      case Unit::Hour:
        seconds += 3600 * n;
        break;
      case Unit::Day:
        days += n;
        break;
      case Unit::Week:
        days += 7 * n;
        break;
      case Unit::Fortnight:
        days += 14 * n;
        break;
      case Unit::Month:
        months += n;
        break;
      case Unit::Year:
        months += 12 * n;
        break;
    }
  }
  void negate() {
    seconds = -seconds;
    days = -days;
    months = -months;
  }
};

// base + rel: months and days on the local calendar (an overflowing day rolls into the next month, as date -d
// does), then seconds.
int64_t apply(int64_t base, const Relative& rel, const TimeZone& zone) {
  using namespace std::chrono;
  int64_t t = base;
  if (rel.months || rel.days) {
    int64_t local = base + zone.offset_at(base);
    auto day = floor<days>(sys_seconds{seconds{local}});
    int64_t sod = local - day.time_since_epoch().count() * 86400;
    year_month_day ymd{day};
    int64_t m =
        static_cast<int64_t>(static_cast<int>(ymd.year())) * 12 + (static_cast<unsigned>(ymd.month()) - 1) + rel.months;
    int64_t y = m >= 0 ? m / 12 : (m - 11) / 12;
    unsigned mon = static_cast<unsigned>(m - y * 12) + 1;
    sys_days first = sys_days{year_month_day{year{static_cast<int>(y)}, month{mon}, std::chrono::day{1}}};
    sys_days target = first + std::chrono::days{static_cast<unsigned>(ymd.day()) - 1 + rel.days};
    t = zone.to_unix(target.time_since_epoch().count() * 86400 + sod);
  }
  return t + rel.seconds;
}

}  // namespace

int64_t parse_date_expr(std::string_view text, int64_t now, const TimeZone& zone) {
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) bad(text, "empty");
  if (s[0] == '@') {
    auto v = integer(s.substr(1));
    if (!v) bad(text, "expected @<unix seconds>");
    return *v;
  }
  try {
    return slurm::parse_timestamp(s, zone).unix_seconds;
  } catch (const slurm::ParseError&) {
  }
  std::vector<std::string_view> words;
  for (size_t i = 0; i < s.size();) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) words.push_back(s.substr(i, j - i));
    i = j;
  }
  size_t w = 0;
  int64_t base = now;
  auto lower = [](std::string_view v) {
    std::string l(v);
    for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return l;
  };
  std::string first = lower(words[0]);
  Relative rel;
  if (first == "now" || first == "today") {
    ++w;
  } else if (first == "yesterday") {
    rel.days -= 1;
    ++w;
  } else if (first == "tomorrow") {
    rel.days += 1;
    ++w;
  } else if (!integer(words[0]) && !unit_of(std::string(words[0]))) {
    // A base date ("2021-04-07"), possibly with a time as the next word ("2021-04-07 23:57").
    size_t take = words.size() > 1 && words[1].find(':') != std::string_view::npos ? 2 : 1;
    std::string joined(words[0]);
    if (take == 2) joined += " " + std::string(words[1]);
    try {
      base = slurm::parse_timestamp(joined, zone).unix_seconds;
    } catch (const slurm::ParseError& e) {
      bad(text, "not a date, @seconds, now/today/yesterday/tomorrow or '<N> <unit> [ago]'");
    }
    w += take;
  }
  Relative pending;
  bool any = false;
  while (w < words.size()) {
    std::string word = lower(words[w]);
    if (word == "ago") {
      if (!any) bad(text, "'ago' without a preceding '<N> <unit>'");
      pending.negate();
      rel.seconds += pending.seconds;
      rel.days += pending.days;
      rel.months += pending.months;
      pending = Relative{};
      ++w;
      continue;
    }
    int64_t n = 1;
    if (auto v = integer(words[w])) {
      n = *v;
      if (++w == words.size()) bad(text, "a number without a unit");
    }
    auto u = unit_of(std::string(words[w]));
    if (!u) bad(text, fmt::format("unknown unit '{}'", words[w]));
    pending.add(*u, n);  // "ago" right after it negates this item
    any = true;
    ++w;
    if (w < words.size() && lower(words[w]) == "ago") continue;
    rel.seconds += pending.seconds;
    rel.days += pending.days;
    rel.months += pending.months;
    pending = Relative{};
  }
  rel.seconds += pending.seconds;
  rel.days += pending.days;
  rel.months += pending.months;
  return apply(base, rel, zone);
}

std::string naive_local_iso(int64_t unix_seconds, const TimeZone& zone) {
  slurm::Timestamp t;
  t.unix_seconds = unix_seconds;
  std::string s = slurm::format_iso(slurm::in_zone(t, zone));
  return s.substr(0, 19);
}

std::string offset_iso(int64_t unix_seconds, const TimeZone& zone) {
  slurm::Timestamp t;
  t.unix_seconds = unix_seconds;
  return slurm::format_iso(slurm::in_zone(t, zone));
}

}  // namespace gcm::sacct
