#include "core/time_zone.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gcm {
namespace {

bool have_zoneinfo() { return std::filesystem::exists("/usr/share/zoneinfo/America/Los_Angeles"); }

// 2024-03-10T10:00:00Z is when Los Angeles moved from -08:00 to -07:00 that year.
constexpr int64_t kLaSpring2024 = 1710064800;

TEST(TimeZone, UtcByDefault) {
  TimeZone utc;
  EXPECT_EQ(utc.name(), "UTC");
  EXPECT_EQ(utc.offset_at(0), 0);
  EXPECT_EQ(utc.to_unix(12345), 12345);
}

// A TZif file written here: one transition at 1700000000 from UTC to +01:00, and the footer rule "ONE-1".
std::string tiny_tzif(bool with_v2) {
  auto be32 = [](std::string& out, uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xff));
  };
  auto block = [&](int time_bytes) {
    std::string b = std::string("TZif") + (with_v2 ? '2' : '\0') + std::string(15, '\0');
    for (uint32_t c : {0u, 0u, 0u, 1u, 2u, 8u}) be32(b, c);  // isut, isstd, leap, time, type, chars
    if (time_bytes == 8) be32(b, 0);
    be32(b, 1700000000u);
    b.push_back('\x01');  // the transition goes to type 1
    be32(b, 0);           // type 0: UTC, not DST, abbreviation at 0
    b += std::string("\0\0", 2);
    be32(b, 3600);  // type 1: +01:00, abbreviation at 4
    b += std::string("\0\x04", 2);
    b += std::string("UTC\0ONE\0", 8);
    return b;
  };
  std::string data = block(4);
  if (with_v2) data += block(8) + "\nONE-1\n";
  return data;
}

TEST(TimeZone, HandWrittenTzif) {
  for (bool v2 : {false, true}) {
    TimeZone z = TimeZone::from_tzif("tiny", tiny_tzif(v2));
    EXPECT_EQ(z.name(), "tiny");
    EXPECT_EQ(z.offset_at(0), 0) << v2;
    EXPECT_EQ(z.offset_at(1699999999), 0) << v2;
    EXPECT_EQ(z.offset_at(1700000000), 3600) << v2;
    EXPECT_EQ(z.offset_at(4000000000), 3600) << v2 << ": the footer (v2) or the last type (v1) continues";
    EXPECT_EQ(z.to_unix(1700000000 + 3600), 1700000000) << v2;
  }
}

TEST(TimeZone, LosAngelesTransitions) {
  if (!have_zoneinfo()) GTEST_SKIP() << "no /usr/share/zoneinfo on this host";
  TimeZone la = TimeZone::load("America/Los_Angeles");
  EXPECT_EQ(la.offset_at(kLaSpring2024 - 1), -8 * 3600);
  EXPECT_EQ(la.offset_at(kLaSpring2024), -7 * 3600);
  EXPECT_EQ(la.offset_at(-3786825600), -(7 * 3600 + 52 * 60 + 58)) << "1850: local mean time";
  // 2100-07-01 lies beyond the file's transitions: the footer rule applies.
  EXPECT_EQ(la.offset_at(4118083200), -7 * 3600);
  EXPECT_EQ(la.offset_at(4102444800), -8 * 3600);  // 2100-01-01
}

TEST(TimeZone, WallClockToInstantLikePython) {
  if (!have_zoneinfo()) GTEST_SKIP() << "no /usr/share/zoneinfo on this host";
  TimeZone la = TimeZone::load("America/Los_Angeles");
  const int64_t midnight_mar10 = 1710028800;  // 2024-03-10T00:00:00 as a wall clock
  EXPECT_EQ(la.to_unix(midnight_mar10 + 3600), midnight_mar10 + 3600 + 8 * 3600);          // 01:00 PST
  EXPECT_EQ(la.to_unix(midnight_mar10 + 9000), midnight_mar10 + 9000 + 7 * 3600);          // 02:30 (gap): 09:30Z
  EXPECT_EQ(la.to_unix(midnight_mar10 + 3 * 3600), midnight_mar10 + 3 * 3600 + 7 * 3600);  // 03:00 PDT
  const int64_t midnight_nov3 = 1730592000;                                      // 2024-11-03T00:00:00 as a wall clock
  EXPECT_EQ(la.to_unix(midnight_nov3 + 5400), midnight_nov3 + 5400 + 7 * 3600);  // 01:30 twice: the first (PDT)
}

TEST(TimeZone, PosixRuleMatchesZoneFile) {
  if (!have_zoneinfo()) GTEST_SKIP() << "no /usr/share/zoneinfo on this host";
  for (auto [name, rule] :
       {std::pair{"America/Los_Angeles", "PST8PDT,M3.2.0,M11.1.0"},
        std::pair{"Australia/Sydney", "AEST-10AEDT,M10.1.0,M4.1.0/3"},
        std::pair{"Europe/Berlin", "CET-1CEST,M3.5.0,M10.5.0/3"}, std::pair{"Asia/Kolkata", "IST-5:30"}}) {
    TimeZone file = TimeZone::load(name);
    TimeZone posix = TimeZone::from_posix_rule(rule);
    // Every 6 hours through 2025 and 2026, where both must agree.
    for (int64_t t = 1735689600; t < 1798761600; t += 6 * 3600) {
      ASSERT_EQ(file.offset_at(t), posix.offset_at(t)) << name << " at " << t;
      ASSERT_EQ(posix.to_unix(t + posix.offset_at(t)), t) << name << " round trip at " << t;
    }
  }
}

TEST(TimeZone, Errors) {
  EXPECT_THROW(TimeZone::load("No/Such_Zone"), TimeZoneError);
  EXPECT_THROW(TimeZone::load("../etc/passwd"), TimeZoneError);
  EXPECT_THROW(TimeZone::from_tzif("x", "TZif2"), TimeZoneError);
  EXPECT_THROW(TimeZone::from_tzif("x", "not a zone file at all, but long enough to have a header......"),
               TimeZoneError);
  EXPECT_THROW(TimeZone::from_posix_rule("8"), TimeZoneError);
  EXPECT_THROW(TimeZone::from_posix_rule("EST5EDT,M13.1.0,M11.1.0"), TimeZoneError);
  if (have_zoneinfo()) {
    std::ifstream in("/usr/share/zoneinfo/America/Los_Angeles", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string data = ss.str();
    for (size_t cut : {size_t{44}, size_t{100}, data.size() / 2}) {
      EXPECT_THROW(TimeZone::from_tzif("cut", data.substr(0, cut)), TimeZoneError) << cut;
    }
  }
}

TEST(TimeZone, HostZoneFromTz) {
  if (!have_zoneinfo()) GTEST_SKIP() << "no /usr/share/zoneinfo on this host";
  const char* old = std::getenv("TZ");
  std::string saved = old ? old : "";
  setenv("TZ", "Asia/Kolkata", 1);
  EXPECT_EQ(TimeZone::host().offset_at(0), 5 * 3600 + 30 * 60);
  setenv("TZ", ":America/Los_Angeles", 1);
  EXPECT_EQ(TimeZone::host().offset_at(kLaSpring2024), -7 * 3600);
  setenv("TZ", "EST5", 1);
  EXPECT_EQ(TimeZone::host().offset_at(kLaSpring2024), -5 * 3600);
  if (old)
    setenv("TZ", saved.c_str(), 1);
  else
    unsetenv("TZ");
}

}  // namespace
}  // namespace gcm
