#include "slurm/timestamp.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace gcm::slurm {
namespace {

class SlurmTimestamp : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/usr/share/zoneinfo/America/Los_Angeles"))
      GTEST_SKIP() << "no /usr/share/zoneinfo on this host";
    la_ = TimeZone::load("America/Los_Angeles");
    kolkata_ = TimeZone::load("Asia/Kolkata");
  }
  TimeZone la_, kolkata_, utc_;
};

// Expected strings are what Python 3.11 prints for datetime.fromisoformat(s) (.astimezone() when naive, with the
// host zone America/Los_Angeles), then .astimezone(target).isoformat().
TEST_F(SlurmTimestamp, MatchesPythonTimeToTimeAware) {
  struct Case {
    const char* in;
    const char* la;
    const char* utc;
    const char* kolkata;
  } cases[] = {
      {"2024-03-10T02:30:00", "2024-03-10T01:30:00-08:00", "2024-03-10T09:30:00+00:00", "2024-03-10T15:00:00+05:30"},
      {"2024-11-03T01:30:00", "2024-11-03T01:30:00-07:00", "2024-11-03T08:30:00+00:00", "2024-11-03T14:00:00+05:30"},
      {"2024-01-02T03:04:05", "2024-01-02T03:04:05-08:00", "2024-01-02T11:04:05+00:00", "2024-01-02T16:34:05+05:30"},
      {"2023-01-28 14:00:00+00:00", "2023-01-28T06:00:00-08:00", "2023-01-28T14:00:00+00:00",
       "2023-01-28T19:30:00+05:30"},
      {"2024-07-01T12:00:00.123456", "2024-07-01T12:00:00.123456-07:00", "2024-07-01T19:00:00.123456+00:00",
       "2024-07-02T00:30:00.123456+05:30"},
      {"2024-07-01T12:00:00.5", "2024-07-01T12:00:00.500000-07:00", "2024-07-01T19:00:00.500000+00:00",
       "2024-07-02T00:30:00.500000+05:30"},
      {"2024-07-01", "2024-07-01T00:00:00-07:00", "2024-07-01T07:00:00+00:00", "2024-07-01T12:30:00+05:30"},
      {"2024-07-01T12", "2024-07-01T12:00:00-07:00", "2024-07-01T19:00:00+00:00", "2024-07-02T00:30:00+05:30"},
      {"2024-07-01T12:00Z", "2024-07-01T05:00:00-07:00", "2024-07-01T12:00:00+00:00", "2024-07-01T17:30:00+05:30"},
      {"1850-01-01T00:00:00", "1850-01-01T00:00:00-07:52:58", "1850-01-01T07:52:58+00:00",
       "1850-01-01T13:46:26+05:53:28"},
      {"2100-07-01T00:00:00", "2100-07-01T00:00:00-07:00", "2100-07-01T07:00:00+00:00", "2100-07-01T12:30:00+05:30"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(time_to_time_aware(c.in, la_, la_), c.la) << c.in;
    EXPECT_EQ(time_to_time_aware(c.in, utc_, la_), c.utc) << c.in;
    EXPECT_EQ(time_to_time_aware(c.in, kolkata_, la_), c.kolkata) << c.in;
  }
}

TEST_F(SlurmTimestamp, PassThroughAndErrors) {
  for (const char* w : {"Unknown", "None", "N/A"}) EXPECT_EQ(time_to_time_aware(w, la_, la_), w);
  for (const char* bad :
       {"", "(null)", "2024-13-01T00:00:00", "2024-02-30", "2024-01-02T24:00:00", "2024-01-02T03:04:05x", "2024-1-2",
        "2024-01-02T03:04:05+2", "yesterday", "2024-01-02T03:04:05.", "0000-01-01"})
    EXPECT_THROW(time_to_time_aware(bad, la_, la_), ParseError) << bad;
}

TEST_F(SlurmTimestamp, OffsetsAndDates) {
  Timestamp t = parse_timestamp("2020-11-16T10:00:00+0530", utc_);
  EXPECT_EQ(t.offset_seconds, 5 * 3600 + 1800);
  EXPECT_EQ(t.unix_seconds, 1605501000);
  EXPECT_EQ(format_iso(t), "2020-11-16T10:00:00+05:30");
  EXPECT_EQ(format_date(in_zone(parse_timestamp("2020-11-17T07:59:59Z", utc_), la_)), "2020-11-16");
  EXPECT_EQ(format_date(in_zone(parse_timestamp("2020-11-17T08:00:00Z", utc_), la_)), "2020-11-17");
  EXPECT_EQ(parse_unix_time("2024-09-25T01:53:54", utc_), 1727229234);
  EXPECT_EQ(parse_unix_time("Unknown", utc_), std::nullopt);
  EXPECT_EQ(parse_unix_time("", utc_), std::nullopt);
  EXPECT_THROW(parse_unix_time("soon", utc_), ParseError);
}

}  // namespace
}  // namespace gcm::slurm
