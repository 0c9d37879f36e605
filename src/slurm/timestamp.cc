#include "slurm/timestamp.h"

#include <chrono>

#include "core/ascii.h"
#include "slurm/coerce.h"

namespace gcm::slurm {

namespace {

[[noreturn]] void bad_time(std::string_view text, std::string_view why) {
  throw ParseError(describe_bad_value("timestamp", text, why));
}

class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  bool done() const { return pos_ == s_.size(); }
  char peek() const { return done() ? '\0' : s_[pos_]; }
  void skip() { ++pos_; }
  bool accept(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  // Exactly n digits.
  std::optional<int> digits(size_t n) {
    if (s_.size() - pos_ < n) return std::nullopt;
    int v = 0;
    for (size_t i = 0; i < n; ++i) {
      char c = s_[pos_ + i];
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + (c - '0');
    }
    pos_ += n;
    return v;
  }
  size_t digit_run() const {
    size_t n = 0;
    while (pos_ + n < s_.size() && s_[pos_ + n] >= '0' && s_[pos_ + n] <= '9') ++n;
    return n;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
};

void append2(std::string& out, int v) {
  out.push_back(static_cast<char>('0' + v / 10));
  out.push_back(static_cast<char>('0' + v % 10));
}

struct Civil {
  int year;
  unsigned month, day;
  int64_t second_of_day;
};

Civil civil_from_local_seconds(int64_t local) {
  using namespace std::chrono;
  auto day = floor<days>(sys_seconds{seconds{local}});
  year_month_day ymd{day};
  return {static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
          local - day.time_since_epoch().count() * int64_t{86400}};
}

void append_date(std::string& out, const Civil& c) {
  std::string y = std::to_string(c.year);
  out.append(y.size() < 4 ? 4 - y.size() : 0, '0');
  out += y;
  out.push_back('-');
  append2(out, static_cast<int>(c.month));
  out.push_back('-');
  append2(out, static_cast<int>(c.day));
}

}  // namespace

bool is_unset_time(std::string_view text) { return text == "Unknown" || text == "None" || text == "N/A"; }

Timestamp parse_timestamp(std::string_view text, const TimeZone& naive_zone) {
  Cursor c(text);
  auto year = c.digits(4);
  if (!year || !c.accept('-')) bad_time(text, "expected YYYY-MM-DD");
  auto month = c.digits(2);
  if (!month || !c.accept('-')) bad_time(text, "expected YYYY-MM-DD");
  auto day = c.digits(2);
  if (!day) bad_time(text, "expected YYYY-MM-DD");
  using namespace std::chrono;
  year_month_day ymd{std::chrono::year{*year}, std::chrono::month{static_cast<unsigned>(*month)},
                     std::chrono::day{static_cast<unsigned>(*day)}};
  if (*year < 1 || !ymd.ok()) bad_time(text, "no such date");
  int hour = 0, minute = 0, second = 0, micro = 0;
  if (!c.done() && (c.peek() == 'T' || c.peek() == ' ')) {
    c.skip();
    auto h = c.digits(2);
    if (!h || *h > 23) bad_time(text, "bad hour");
    hour = *h;
    if (c.accept(':')) {
      auto m = c.digits(2);
      if (!m || *m > 59) bad_time(text, "bad minute");
      minute = *m;
      if (c.accept(':')) {
        auto s = c.digits(2);
        if (!s || *s > 59) bad_time(text, "bad second");
        second = *s;
        if (c.accept('.') || c.accept(',')) {
          size_t n = c.digit_run();
          if (n == 0) bad_time(text, "empty fraction");
          for (size_t i = 0; i < n; ++i) {
            int d = *c.digits(1);
            if (i < 6) micro = micro * 10 + d;
          }
          for (size_t i = n; i < 6; ++i) micro *= 10;
        }
      }
    }
  }
  std::optional<int32_t> offset;
  if (c.accept('Z')) {
    offset = 0;
  } else if (c.peek() == '+' || c.peek() == '-') {
    int sign = c.peek() == '-' ? -1 : 1;
    c.skip();
    auto oh = c.digits(2);
    if (!oh || *oh > 23) bad_time(text, "bad UTC offset");
    int om = 0, os = 0;
    if (c.accept(':')) {
      auto m = c.digits(2);
      if (!m || *m > 59) bad_time(text, "bad UTC offset");
      om = *m;
      if (c.accept(':')) {
        auto s = c.digits(2);
        if (!s || *s > 59) bad_time(text, "bad UTC offset");
        os = *s;
      }
    } else if (c.digit_run() == 2) {
      om = *c.digits(2);
      if (om > 59) bad_time(text, "bad UTC offset");
    }
    offset = sign * (*oh * 3600 + om * 60 + os);
  }
  if (!c.done()) bad_time(text, "unexpected text after the time");
  int64_t local = sys_days{ymd}.time_since_epoch().count() * int64_t{86400} + hour * 3600 + minute * 60 + second;
  Timestamp t;
  t.microseconds = micro;
  if (offset) {
    t.unix_seconds = local - *offset;
    t.offset_seconds = *offset;
  } else {
    t.unix_seconds = naive_zone.to_unix(local);
    t.offset_seconds = naive_zone.offset_at(t.unix_seconds);
  }
  return t;
}

Timestamp in_zone(const Timestamp& t, const TimeZone& zone) {
  Timestamp out = t;
  out.offset_seconds = zone.offset_at(t.unix_seconds);
  return out;
}

std::string format_iso(const Timestamp& t) {
  Civil c = civil_from_local_seconds(t.unix_seconds + t.offset_seconds);
  std::string out;
  out.reserve(32);
  append_date(out, c);
  out.push_back('T');
  append2(out, static_cast<int>(c.second_of_day / 3600));
  out.push_back(':');
  append2(out, static_cast<int>(c.second_of_day / 60 % 60));
  out.push_back(':');
  append2(out, static_cast<int>(c.second_of_day % 60));
  if (t.microseconds) {
    std::string us = std::to_string(t.microseconds);
    out.push_back('.');
    out.append(6 - us.size(), '0');
    out += us;
  }
  int32_t off = t.offset_seconds;
  out.push_back(off < 0 ? '-' : '+');
  if (off < 0) off = -off;
  append2(out, off / 3600);
  out.push_back(':');
  append2(out, off / 60 % 60);
  if (off % 60) {
    out.push_back(':');
    append2(out, off % 60);
  }
  return out;
}

std::string format_naive(int64_t unix_seconds, const TimeZone& zone) {
  return format_iso(in_zone(Timestamp{unix_seconds, 0, 0}, zone)).substr(0, 19);  // the offset dropped
}

std::string format_date(const Timestamp& t) {
  std::string out;
  append_date(out, civil_from_local_seconds(t.unix_seconds + t.offset_seconds));
  return out;
}

std::string time_to_time_aware(std::string_view text, const TimeZone& target, const TimeZone& naive_zone) {
  if (is_unset_time(text)) return std::string(text);
  return format_iso(in_zone(parse_timestamp(text, naive_zone), target));
}

std::optional<int64_t> parse_unix_time(std::string_view text, const TimeZone& naive_zone) {
  if (is_null_like(text)) return std::nullopt;
  return parse_timestamp(ascii_trim(text), naive_zone).unix_seconds;
}

}  // namespace gcm::slurm
