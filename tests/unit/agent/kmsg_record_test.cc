// The /dev/kmsg record parser: header fields, priority split, dictionary lines, and bad records named.
#include <gtest/gtest.h>

#include "agent/kmsg_record.h"

namespace gcm::agent {
namespace {

TEST(KmsgRecord, ParsesHeaderAndMessage) {
  auto r = parse_kmsg_record("4,2001,5000000123,-;NVRM: Xid (PCI:0000:0d:00): 31, pid=1\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->facility, 0);
  EXPECT_EQ(r->level, 4);
  EXPECT_EQ(r->seq, 2001u);
  EXPECT_EQ(r->ts_usec, 5000000123u);
  EXPECT_EQ(r->flag, '-');
  EXPECT_FALSE(r->continuation());
  EXPECT_EQ(r->message, "NVRM: Xid (PCI:0000:0d:00): 31, pid=1");
  EXPECT_TRUE(r->dict.empty());
}

TEST(KmsgRecord, SplitsPriorityIntoFacilityAndLevel) {
  auto r = parse_kmsg_record("30,7,8,c;systemd[1]: started");  // daemon.info, no final newline
  ASSERT_TRUE(r);
  EXPECT_EQ(r->facility, 3);
  EXPECT_EQ(r->level, 6);
  EXPECT_EQ(r->flag, 'c');
  EXPECT_TRUE(r->continuation());
  EXPECT_EQ(r->message, "systemd[1]: started");
}

TEST(KmsgRecord, ReadsDictionaryLines) {
  auto r =
      parse_kmsg_record("3,77,123,-;nvidia 0000:3b:00.0: fault\n SUBSYSTEM=pci\n DEVICE=+pci:0000:3b:00.0\n EMPTY=\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->message, "nvidia 0000:3b:00.0: fault");
  ASSERT_EQ(r->dict.size(), 3u);
  EXPECT_EQ(r->dict[0].key, "SUBSYSTEM");
  EXPECT_EQ(r->dict[0].value, "pci");
  EXPECT_EQ(r->dict_value("DEVICE"), "+pci:0000:3b:00.0");
  EXPECT_EQ(r->dict_value("EMPTY"), "");
  EXPECT_FALSE(r->dict_value("MISSING"));
}

TEST(KmsgRecord, IgnoresLaterHeaderFieldsAndKeepsSemicolonsInTheMessage) {
  auto r = parse_kmsg_record("6,1,2,-,caller=T123;a; b;c");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->seq, 1u);
  EXPECT_EQ(r->message, "a; b;c");
  auto empty = parse_kmsg_record("6,1,2,-;");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->message, "");
}

TEST(KmsgRecord, BadRecordsSayWhatWasExpected) {
  struct Case {
    const char* text;
    const char* expected;
  };
  const Case cases[] = {
      {"", "ending in ';'"},
      {"no header here", "ending in ';'"},
      {"6,1,2,-\n;late semicolon", "ending in ';'"},
      {",1,2,-;m", "the priority"},
      {"x,1,2,-;m", "the priority"},
      {"99999999999,1,2,-;m", "the priority"},
      {"6;m", "the sequence number after"},
      {"6,a,2,-;m", "digits (the sequence number)"},
      {"6,99999999999999999999,2,-;m", "digits (the sequence number)"},  // 2^64 and more
      {"6,1;m", "the timestamp after"},
      {"6,1,-5,-;m", "the timestamp"},
      {"6,1,2;m", "one flag character"},
      {"6,1,2,--;m", "one flag character"},
      {"6,1,2,-;m\nSUBSYSTEM=pci", "beginning with ' '"},
      {"6,1,2,-;m\n\n SUBSYSTEM=pci", "beginning with ' '"},
      {"6,1,2,-;m\n novalue", "KEY=value"},
      {"6,1,2,-;m\n =v", "KEY=value"},
  };
  for (const auto& c : cases) {
    std::string error;
    EXPECT_FALSE(parse_kmsg_record(c.text, &error)) << c.text;
    EXPECT_NE(error.find(c.expected), std::string::npos) << c.text << " -> " << error;
  }
  EXPECT_FALSE(parse_kmsg_record("garbage"));  // without an error string
}

TEST(KmsgRecord, LargestValuesFit) {
  auto r = parse_kmsg_record("2147483647,18446744073709551615,18446744073709551615,-;m");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->seq, UINT64_MAX);
  EXPECT_EQ(r->level, 7);
}

}  // namespace
}  // namespace gcm::agent
