#include "core/dotlist.h"

#include <gtest/gtest.h>

#include "core/json.h"
#include "core/si_size.h"

namespace gcm {
namespace {

std::string parsed(std::vector<std::string> items) { return to_json(parse_dotlist(items)); }

TEST(Dotlist, TypesValuesLikeYaml) {
  EXPECT_EQ(parsed({"a=1", "b=2.5", "c=true", "d=False", "e=null", "f=~", "g=text", "h=-3", "i=1e3"}),
            R"({"a":1,"b":2.5,"c":true,"d":false,"e":null,"f":null,"g":"text","h":-3,"i":1000.0})");
}

TEST(Dotlist, ListsAndDicts) {
  EXPECT_EQ(parsed({"l=[a, 2, 'c d']"}), R"({"l":["a",2,"c d"]})");
  EXPECT_EQ(parsed({"log_resource_attributes={'key1': 'val1', key2: 3}"}),
            R"({"log_resource_attributes":{"key1":"val1","key2":3}})");
  EXPECT_EQ(parsed({"d={}", "e=[]"}), R"({"d":{},"e":[]})");
  EXPECT_EQ(parsed({"n={'a': [1, {'b': null}]}"}), R"({"n":{"a":[1,{"b":null}]}})");
}

TEST(Dotlist, DottedKeysNestAndLastWins) {
  EXPECT_EQ(parsed({"a.b=1", "a.c=2", "a.b=3"}), R"({"a":{"b":3,"c":2}})");
  EXPECT_EQ(parsed({"x=1", "x=2"}), R"({"x":2})");
}

TEST(Dotlist, QuotedStringsStayStrings) {
  EXPECT_EQ(parsed({"a='1'", "b=\"true\"", "c='it''s'"}), R"({"a":"1","b":"true","c":"it's"})");
  EXPECT_EQ(parsed({"url=http://h:4318/x?y=1"}), R"({"url":"http://h:4318/x?y=1"})");
}

TEST(Dotlist, ErrorsNameTheItem) {
  try {
    parse_dotlist({"novalue"});
    FAIL();
  } catch (const DotlistError& e) {
    EXPECT_NE(std::string(e.what()).find("'novalue'"), std::string::npos);
  }
  try {
    parse_dotlist({"a=[1, 2"});
    FAIL();
  } catch (const DotlistError& e) {
    EXPECT_NE(std::string(e.what()).find("a=[1, 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_dotlist({"a={'k' 1}"}), DotlistError);
  EXPECT_THROW(parse_dotlist({"=1"}), DotlistError);
}

TEST(SiSize, ReferenceRules) {
  EXPECT_EQ(parse_si_size("0"), 0);
  EXPECT_EQ(parse_si_size("512"), 512);
  EXPECT_EQ(parse_si_size("3k"), 3000);
  EXPECT_EQ(parse_si_size("1M"), 1000000);
  try {
    parse_si_size("1K");
    FAIL();
  } catch (const SiSizeError& e) {
    EXPECT_STREQ(e.what(), "Unrecognized SI symbol 'K'. Allowed symbols are: k, M");
  }
  EXPECT_THROW(parse_si_size("k"), SiSizeError);
  EXPECT_THROW(parse_si_size("-1"), SiSizeError);
  EXPECT_THROW(parse_si_size(""), SiSizeError);
}

TEST(SiSize, OverflowIsAnErrorNeverAWrap) {
  // 18446744073710M once wrapped to 448 KB: every suffix is checked before multiplying.
  try {
    parse_si_size("18446744073710M");
    FAIL() << "wrapped";
  } catch (const SiSizeError& e) {
    EXPECT_NE(std::string(e.what()).find("'18446744073710M' is too large"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_si_size("9223372036854776k"), SiSizeError);
  EXPECT_THROW(parse_si_size("99999999999999999999"), SiSizeError);
  EXPECT_EQ(parse_si_size("9223372036854M"), 9223372036854000000);
  EXPECT_EQ(parse_si_size("9223372036854775807"), 9223372036854775807);
}

}  // namespace
}  // namespace gcm
