// IANA time zones read from the system's zoneinfo files (TZif, RFC 8536), for converting Slurm's naive local
// timestamps and writing dates in America/Los_Angeles as the reference does. libstdc++ 12 has no std::chrono tzdb,
// and setting TZ for localtime_r would change the whole process, so the zone data is read here.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gcm {

struct TimeZoneError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class TimeZone {
 public:
  TimeZone();  // UTC

  // A zone by IANA name ("America/Los_Angeles", "UTC"), from $TZDIR or /usr/share/zoneinfo. Throws TimeZoneError
  // naming the zone when it is unknown or the file is not valid TZif.
  static TimeZone load(std::string_view name);
  // A zone from TZif bytes (tests, embedded data). Throws TimeZoneError.
  static TimeZone from_tzif(std::string_view name, std::string_view data);
  // A zone from a POSIX TZ rule ("PST8PDT,M3.2.0,M11.1.0", "UTC0"). Throws TimeZoneError.
  static TimeZone from_posix_rule(std::string_view rule);
  // The host's zone as the reference's timezone.get_local() finds it: $TZ when set (":" prefix allowed; a zone name,
  // else a POSIX rule), else /etc/localtime; UTC when neither can be read.
  static TimeZone host();

  const std::string& name() const { return name_; }

  // Seconds east of UTC in effect at the instant unix_seconds.
  int32_t offset_at(int64_t unix_seconds) const;

  // The instant of a wall-clock time in this zone, given as seconds since 1970-01-01T00:00:00 of that wall clock.
  // As Python's astimezone() does for a naive value (which the reference uses): an ambiguous time (clocks turned
  // back) is the earlier instant; a time that does not exist (clocks turned forward) is read with the offset in
  // effect after the change, which is also the earlier of the two readings (02:30 on a spring-forward night in
  // Los Angeles is 01:30 PST).
  int64_t to_unix(int64_t local_seconds) const;

 private:
  struct Type {
    int32_t offset = 0;
    bool dst = false;
  };
  // The POSIX rule that continues the transitions (the TZif footer).
  struct Rule {
    int32_t std_offset = 0, dst_offset = 0;
    bool has_dst = false;
    // A transition date: kind 'J' (1..365, no Feb 29), 'D' (0..365), 'M' (month, week 1..5, weekday 0..6).
    struct When {
      char kind = 'M';
      int a = 0, b = 0, c = 0;
      int32_t time = 7200;  // seconds after local midnight
    } start, end;
  };
  static std::optional<Rule> parse_rule(std::string_view rule);
  static int64_t rule_transition_utc(const Rule::When& w, int year, int32_t offset_before);
  int32_t rule_offset_at(const Rule& r, int64_t unix_seconds) const;

  std::string name_ = "UTC";
  std::vector<int64_t> transitions_;       // instants, ascending
  std::vector<uint8_t> transition_types_;  // index into types_ for each transition
  std::vector<Type> types_{Type{}};
  std::optional<Rule> rule_;  // after the last transition
};

}  // namespace gcm
