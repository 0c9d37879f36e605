#include "core/time_zone.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gcm {

namespace {

std::string read_zone_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string zoneinfo_dir() {
  const char* dir = std::getenv("TZDIR");
  return dir && *dir ? dir : "/usr/share/zoneinfo";
}

// Big-endian reads with bounds checks: a truncated file is an error, never a read past the end.
class Reader {
 public:
  Reader(std::string_view data, std::string_view zone) : data_(data), zone_(zone) {}
  size_t pos() const { return pos_; }
  void seek(size_t p) {
    if (p > data_.size()) fail();
    pos_ = p;
  }
  uint64_t be(size_t bytes) {
    if (data_.size() - pos_ < bytes) fail();
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(data_[pos_ + i]);
    pos_ += bytes;
    return v;
  }
  std::string_view rest() const { return data_.substr(pos_); }
  [[noreturn]] void fail() const { throw TimeZoneError("time zone '" + std::string(zone_) + "': truncated TZif data"); }

 private:
  std::string_view data_, zone_;
  size_t pos_ = 0;
};

struct Counts {
  uint64_t isut, isstd, leap, time, type, chars;
};

Counts read_header(Reader& r) {
  r.seek(r.pos() + 20);  // magic, version, 15 reserved bytes
  Counts c;
  c.isut = r.be(4);
  c.isstd = r.be(4);
  c.leap = r.be(4);
  c.time = r.be(4);
  c.type = r.be(4);
  c.chars = r.be(4);
  return c;
}

// POSIX TZ rule parsing helpers over a cursor.
struct RuleCursor {
  std::string_view s;
  size_t pos = 0;
  bool done() const { return pos >= s.size(); }
  char peek() const { return done() ? '\0' : s[pos]; }
};

bool parse_zone_abbreviation(RuleCursor& c) {
  if (c.peek() == '<') {
    size_t close = c.s.find('>', c.pos);
    if (close == std::string_view::npos) return false;
    c.pos = close + 1;
    return true;
  }
  size_t start = c.pos;
  while (!c.done() && ((c.peek() >= 'a' && c.peek() <= 'z') || (c.peek() >= 'A' && c.peek() <= 'Z'))) ++c.pos;
  return c.pos > start;
}

// [+-]h[h...][:mm[:ss]] -> seconds (POSIX sign, not yet inverted).
std::optional<int32_t> parse_hms(RuleCursor& c) {
  int sign = 1;
  if (c.peek() == '+' || c.peek() == '-') {
    sign = c.peek() == '-' ? -1 : 1;
    ++c.pos;
  }
  int32_t parts[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (c.peek() != ':') break;
      ++c.pos;
    }
    size_t start = c.pos;
    int32_t v = 0;
    while (!c.done() && c.peek() >= '0' && c.peek() <= '9' && c.pos - start < 3) v = v * 10 + (c.s[c.pos++] - '0');
    if (c.pos == start) return std::nullopt;
    parts[i] = v;
  }
  return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
}

std::optional<int> parse_small_number(RuleCursor& c) {
  size_t start = c.pos;
  int v = 0;
  while (!c.done() && c.peek() >= '0' && c.peek() <= '9' && c.pos - start < 4) v = v * 10 + (c.s[c.pos++] - '0');
  if (c.pos == start) return std::nullopt;
  return v;
}

}  // namespace

TimeZone::TimeZone() = default;

TimeZone TimeZone::from_tzif(std::string_view name, std::string_view data) {
  if (data.size() < 44 || data.substr(0, 4) != "TZif")
    throw TimeZoneError("time zone '" + std::string(name) + "': not a TZif file");
  Reader r(data, name);
  char version = data[4];
  Counts c = read_header(r);
  size_t time_bytes = 4;
  if (version >= '2') {
    // Skip the 32-bit block; the 64-bit block after the second header covers every date.
    uint64_t v1 = c.time * 5 + c.type * 6 + c.chars + c.leap * 8 + c.isstd + c.isut;
    if (v1 > data.size()) r.fail();
    r.seek(r.pos() + v1);
    if (r.rest().substr(0, 4) != "TZif") r.fail();
    c = read_header(r);
    time_bytes = 8;
  }
  if (c.type == 0 || c.type > 256 || c.time > data.size() || c.chars > data.size())
    throw TimeZoneError("time zone '" + std::string(name) + "': invalid TZif counts");
  TimeZone z;
  z.name_ = std::string(name);
  z.transitions_.reserve(c.time);
  for (uint64_t i = 0; i < c.time; ++i) {
    uint64_t raw = r.be(time_bytes);
    int64_t t = time_bytes == 8 ? static_cast<int64_t>(raw) : static_cast<int32_t>(static_cast<uint32_t>(raw));
    z.transitions_.push_back(t);
  }
  for (uint64_t i = 0; i < c.time; ++i) {
    auto idx = static_cast<uint8_t>(r.be(1));
    if (idx >= c.type) throw TimeZoneError("time zone '" + std::string(name) + "': invalid TZif type index");
    z.transition_types_.push_back(idx);
  }
  z.types_.clear();
  for (uint64_t i = 0; i < c.type; ++i) {
    Type t;
    t.offset = static_cast<int32_t>(static_cast<uint32_t>(r.be(4)));
    t.dst = r.be(1) != 0;
    r.be(1);  // abbreviation index
    z.types_.push_back(t);
  }
  r.seek(r.pos() + c.chars + c.leap * (time_bytes + 4) + c.isstd + c.isut);
  if (time_bytes == 8) {
    std::string_view rest = r.rest();
    if (rest.size() >= 2 && rest[0] == '\n') {
      size_t nl = rest.find('\n', 1);
      if (nl != std::string_view::npos && nl > 1) z.rule_ = parse_rule(rest.substr(1, nl - 1));
    }
  }
  return z;
}

TimeZone TimeZone::load(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.find("..") != std::string_view::npos)
    throw TimeZoneError("'" + std::string(name) + "' is not a valid time zone name");
  std::string data = read_zone_file(zoneinfo_dir() + "/" + std::string(name));
  if (data.empty()) throw TimeZoneError("'" + std::string(name) + "' is not a valid timezone");
  return from_tzif(name, data);
}

TimeZone TimeZone::from_posix_rule(std::string_view rule) {
  auto r = parse_rule(rule);
  if (!r) throw TimeZoneError("'" + std::string(rule) + "' is not a valid POSIX TZ rule");
  TimeZone z;
  z.name_ = std::string(rule);
  z.types_ = {Type{r->std_offset, false}};
  z.rule_ = r;
  return z;
}

TimeZone TimeZone::host() {
  const char* tz = std::getenv("TZ");
  if (tz && *tz) {
    std::string_view v(tz);
    if (v.front() == ':') v.remove_prefix(1);
    try {
      if (!v.empty() && v.front() == '/') return from_tzif(v, read_zone_file(std::string(v)));
      return load(v);
    } catch (const TimeZoneError&) {
    }
    try {
      return from_posix_rule(v);
    } catch (const TimeZoneError&) {
    }
    return TimeZone();
  }
  std::string data = read_zone_file("/etc/localtime");
  if (data.empty()) return TimeZone();
  std::string name = "localtime";
  char target[4096];
  ssize_t n = ::readlink("/etc/localtime", target, sizeof target - 1);
  if (n > 0) {
    std::string t(target, static_cast<size_t>(n));
    size_t at = t.find("zoneinfo/");
    name = at == std::string::npos ? t : t.substr(at + 9);
  }
  try {
    return from_tzif(name, data);
  } catch (const TimeZoneError&) {
    return TimeZone();
  }
}

std::optional<TimeZone::Rule> TimeZone::parse_rule(std::string_view text) {
  RuleCursor c{text};
  Rule r;
  if (!parse_zone_abbreviation(c)) return std::nullopt;
  auto std_off = parse_hms(c);
  if (!std_off) return std::nullopt;
  r.std_offset = -*std_off;  // POSIX counts hours west of Greenwich
  if (c.done()) return r;
  if (!parse_zone_abbreviation(c)) return std::nullopt;
  r.has_dst = true;
  r.dst_offset = r.std_offset + 3600;
  if (!c.done() && c.peek() != ',') {
    auto dst_off = parse_hms(c);
    if (!dst_off) return std::nullopt;
    r.dst_offset = -*dst_off;
  }
  if (c.done()) {  // no dates: POSIX leaves them to the implementation; use the US rules, as glibc does
    r.start = {'M', 3, 2, 0, 7200};
    r.end = {'M', 11, 1, 0, 7200};
    return r;
  }
  for (Rule::When* w : {&r.start, &r.end}) {
    if (c.peek() != ',') return std::nullopt;
    ++c.pos;
    if (c.peek() == 'M') {
      ++c.pos;
      auto m = parse_small_number(c);
      if (!m || c.peek() != '.') return std::nullopt;
      ++c.pos;
      auto wk = parse_small_number(c);
      if (!wk || c.peek() != '.') return std::nullopt;
      ++c.pos;
      auto d = parse_small_number(c);
      if (!d || *m < 1 || *m > 12 || *wk < 1 || *wk > 5 || *d > 6) return std::nullopt;
      *w = {'M', *m, *wk, *d, 7200};
    } else if (c.peek() == 'J') {
      ++c.pos;
      auto n = parse_small_number(c);
      if (!n || *n < 1 || *n > 365) return std::nullopt;
      *w = {'J', *n, 0, 0, 7200};
    } else {
      auto n = parse_small_number(c);
      if (!n || *n > 365) return std::nullopt;
      *w = {'D', *n, 0, 0, 7200};
    }
    if (c.peek() == '/') {
      ++c.pos;
      auto t = parse_hms(c);
      if (!t) return std::nullopt;
      w->time = *t;
    }
  }
  if (!c.done()) return std::nullopt;
  return r;
}

int64_t TimeZone::rule_transition_utc(const Rule::When& w, int year, int32_t offset_before) {
  using namespace std::chrono;
  sys_days day;
  const auto y = std::chrono::year{year};
  if (w.kind == 'J') {
    // Julian day 1..365, Feb 29 never counted: day 60 is always March 1.
    day = sys_days{y / January / 1} + days{w.a - 1};
    if (y.is_leap() && w.a >= 60) day += days{1};
  } else if (w.kind == 'D') {
    day = sys_days{y / January / 1} + days{w.a};
  } else {
    const auto m = month{static_cast<unsigned>(w.a)};
    const auto wd = weekday{static_cast<unsigned>(w.c)};
    day = w.b == 5 ? sys_days{y / m / wd[last]} : sys_days{y / m / wd[static_cast<unsigned>(w.b)]};
  }
  int64_t local = day.time_since_epoch().count() * int64_t{86400} + w.time;
  return local - offset_before;
}

int32_t TimeZone::rule_offset_at(const Rule& r, int64_t t) const {
  if (!r.has_dst) return r.std_offset;
  using namespace std::chrono;
  auto local_day = floor<days>(sys_seconds{seconds{t + r.std_offset}});
  int year = static_cast<int>(year_month_day{local_day}.year());
  int64_t start = rule_transition_utc(r.start, year, r.std_offset);
  int64_t end = rule_transition_utc(r.end, year, r.dst_offset);
  bool dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);
  return dst ? r.dst_offset : r.std_offset;
}

int32_t TimeZone::offset_at(int64_t t) const {
  if (transitions_.empty() || t < transitions_.front()) {
    if (transitions_.empty() && rule_) return rule_offset_at(*rule_, t);
    return types_.front().offset;  // before the first transition: time type 0 (RFC 8536)
  }
  size_t i =
      static_cast<size_t>(std::upper_bound(transitions_.begin(), transitions_.end(), t) - transitions_.begin()) - 1;
  if (i + 1 == transitions_.size() && rule_) return rule_offset_at(*rule_, t);
  return types_[transition_types_[i]].offset;
}

int64_t TimeZone::to_unix(int64_t local) const {
  std::vector<int32_t> offsets;
  for (const Type& t : types_) offsets.push_back(t.offset);
  if (rule_) {
    offsets.push_back(rule_->std_offset);
    offsets.push_back(rule_->dst_offset);
  }
  std::optional<int64_t> earliest;
  for (int32_t o : offsets) {
    int64_t u = local - o;
    if (offset_at(u) == o && (!earliest || u < *earliest)) earliest = u;
  }
  if (earliest) return *earliest;
  // In a gap (clocks turned forward): Python's astimezone() on a naive value, which the reference relies on, reads
  // the wall clock with the offset in effect after the change, giving the earlier of the two candidate instants.
  // Just after the gap lies at or after local - (smallest offset).
  int32_t smallest = *std::min_element(offsets.begin(), offsets.end());
  return local - offset_at(local - smallest);
}

}  // namespace gcm
