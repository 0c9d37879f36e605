#include "core/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/flatten.h"
#include "core/json_scan.h"

namespace gcm {
namespace {

Schema two_fields() {
  Schema s;
  s.name = "T";
  s.fields = {{"a", FieldType::String}, {"b", FieldType::Int}};
  return s;
}

TEST(Json, PythonFormMatchesJsonDumps) {
  Schema s = two_fields();
  Record r(s);
  r[0] = "x\u00e9\"\\\n";
  r[1] = 5;
  // Python: json.dumps({"a": "xé\"\\\n", "b": 5})
  EXPECT_EQ(to_json(r, false, JsonStyle::Python), R"({"a": "x\u00e9\"\\\n", "b": 5})");
  EXPECT_EQ(to_json(r, false, JsonStyle::Compact), "{\"a\":\"x\u00e9\\\"\\\\\\n\",\"b\":5}");
}

TEST(Json, DropsNullTopLevelFieldsOnlyWhenAsked) {
  Schema s = two_fields();
  Record r(s);
  r[1] = 1;
  EXPECT_EQ(to_json(r, true), R"({"b":1})");
  EXPECT_EQ(to_json(r, false), R"({"a":null,"b":1})");
}

TEST(Json, AstralCharactersBecomeSurrogatePairsInPythonForm) {
  EXPECT_EQ(to_json(Value("\xF0\x9F\x98\x80"), JsonStyle::Python), R"("\ud83d\ude00")");
  EXPECT_EQ(to_json(Value("\xF0\x9F\x98\x80"), JsonStyle::Compact), "\"\xF0\x9F\x98\x80\"");
}

TEST(Json, InvalidUtf8IsReplacedNeverEmittedRaw) {
  std::string bad =
      "a\xff"
      "b\xc3(\xed\xa0\x80";  // stray byte, truncated sequence, encoded surrogate
  std::string compact = to_json(Value(bad), JsonStyle::Compact);
  EXPECT_EQ(compact,
            "\"a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD(\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT_EQ(to_json(Value(bad), JsonStyle::Python), R"("a\ufffdb\ufffd(\ufffd\ufffd\ufffd")");
  std::string out;
  EXPECT_EQ(append_valid_utf8(out, bad), 5u);
}

TEST(Json, ControlCharactersAreEscaped) {
  EXPECT_EQ(to_json(Value(std::string("\x01\t\x1f", 3))), R"("\u0001\t\u001f")");
}

// The plain-text scan reads words of 4, 8 and 16 bytes that overlap at the ends of a string: a byte that needs
// escaping must be found at every position of every length, and a plain string of any length stays as it is.
TEST(Json, EscapingIsFoundAtEveryPositionOfEveryLength) {
  const std::pair<char, std::string> specials[] = {
      {'"', "\\\""}, {'\\', "\\\\"}, {'\n', "\\n"}, {'\x01', "\\u0001"}, {'\x1f', "\\u001f"}};
  for (size_t n = 0; n <= 40; ++n) {
    std::string plain;
    for (size_t k = 0; k < n; ++k) plain += "abcdefghij0123456789 ~_.:"[k % 25];
    EXPECT_TRUE(is_json_plain_ascii(plain)) << n;
    EXPECT_EQ(to_json(Value(plain)), "\"" + plain + "\"") << n;
    for (size_t at = 0; at < n; ++at) {
      for (const auto& [c, escaped] : specials) {
        std::string s = plain;
        s[at] = c;
        EXPECT_FALSE(is_json_plain_ascii(s)) << n << " " << at;
        EXPECT_EQ(to_json(Value(s)), "\"" + plain.substr(0, at) + escaped + plain.substr(at + 1) + "\"")
            << n << " " << at;
      }
      std::string high = plain;
      high[at] = static_cast<char>(0xC3);  // the start of a two-byte sequence with no continuation: invalid
      EXPECT_FALSE(is_json_plain_ascii(high)) << n << " " << at;
    }
  }
}

// The first byte to escape, at every position of every length, with a second one after it (which a borrow in the
// word scan could flag falsely below, were its lowest flag not exact) and bytes on both sides that are not part
// of the string (a read outside it would see them).
TEST(Json, TheScanFindsTheFirstByteToEscape) {
  const char specials[] = {'"', '\\', '\n', '\x01', '\x1f', static_cast<char>(0x80), static_cast<char>(0xff)};
  for (size_t n = 0; n <= 48; ++n) {
    std::string buf(n + 32, '"');  // 16 special bytes before and after the string
    for (size_t k = 0; k < n; ++k) buf[16 + k] = "abcdefghij0123456789 ~_.:"[k % 25];
    const char* p = buf.data() + 16;
    EXPECT_EQ(json_scan::first_special(p, n), n) << n;
    for (size_t at = 0; at < n; ++at)
      for (char c : specials) {
        std::string s = buf;
        s[16 + at] = c;
        if (at + 1 < n) s[16 + at + 1] = '\\';
        EXPECT_EQ(json_scan::first_special(s.data() + 16, n), at) << n << " " << at << " " << int(c);
      }
  }
}

TEST(Json, FloatsFollowPythonRepr) {
  EXPECT_EQ(python_float_repr(1.0), "1.0");
  EXPECT_EQ(python_float_repr(0.1), "0.1");
  EXPECT_EQ(python_float_repr(-2.5), "-2.5");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(0.00001), "1e-05");
  EXPECT_EQ(python_float_repr(1.5e-07), "1.5e-07");
  EXPECT_EQ(python_float_repr(123.456), "123.456");
  EXPECT_EQ(python_float_repr(1e100), "1e+100");
  EXPECT_EQ(to_json(Value(std::nan("")), JsonStyle::Python), "NaN");
  EXPECT_EQ(to_json(Value(std::numeric_limits<double>::infinity()), JsonStyle::Python), "Infinity");
  EXPECT_EQ(to_json(Value(std::nan("")), JsonStyle::Compact), "null");
}

TEST(Json, NestedValuesKeepOrder) {
  Value v(Object{{"z", Value(1)}, {"a", Value(List{Value(true), Value(), Value("s")})}});
  EXPECT_EQ(to_json(v, JsonStyle::Python), R"({"z": 1, "a": [true, null, "s"]})");
}

TEST(Json, ObjectMembersAreTheSameBytesWhateverPathWritesThem) {
  // Plain members take the one-append path, the others (escapes, long values, empty parts, non-strings) the
  // general one; the bytes must not tell which.
  Object o;
  auto add = [&o](std::string key, Value v) { o.push_back(Member{std::move(key), std::move(v)}); };
  add("a", Value("plain"));
  add("", Value(""));
  add("q\"k", Value("v"));
  add("k", Value("tab\there"));
  add("long", Value(std::string(300, 'x')));
  add("n", Value(int64_t{7}));
  add("\xC3\xA9", Value("\xC3\xA9"));
  Value v(std::move(o));
  EXPECT_EQ(to_json(v, JsonStyle::Python),
            "{\"a\": \"plain\", \"\": \"\", \"q\\\"k\": \"v\", \"k\": \"tab\\there\", \"long\": \"" +
                std::string(300, 'x') + "\", \"n\": 7, \"\\u00e9\": \"\\u00e9\"}");
  EXPECT_EQ(to_json(v, JsonStyle::Compact),
            "{\"a\":\"plain\",\"\":\"\",\"q\\\"k\":\"v\",\"k\":\"tab\\there\",\"long\":\"" + std::string(300, 'x') +
                "\",\"n\":7,\"\xC3\xA9\":\"\xC3\xA9\"}");
}

TEST(Json, ARecordMarkedPlainIsWrittenAsTheSameBytes) {
  // strings_json_plain only spares the scan: every length (each size class of the member copy) in both styles gives
  // the bytes of the unmarked record, and the schema's own names are still escaped.
  Schema s;
  s.name = "T";
  s.fields = {{"a", FieldType::String}, {"q\"name", FieldType::Object}};
  for (size_t n = 0; n <= 40; ++n) {
    Record r(s);
    std::string text;
    for (size_t i = 0; i < n; ++i) text.push_back(static_cast<char>('a' + i % 26));
    r[0] = text;
    Object o;
    o.push_back(Member{text, Value(text)});
    o.push_back(Member{"k" + text, Value(int64_t{1})});
    o.push_back(Member{text + "v", Value(text + text)});
    r[1] = Value(std::move(o));
    Record marked = r;
    marked.strings_json_plain = true;
    for (JsonStyle style : {JsonStyle::Python, JsonStyle::Compact}) {
      EXPECT_EQ(to_json(marked, false, style), to_json(r, false, style)) << n;
      EXPECT_NE(to_json(marked, false, style).find("\"q\\\"name\""), std::string::npos);
    }
  }
}

TEST(Json, CompactSizeEqualsEncodedLength) {
  Schema s;
  s.name = "S";
  s.fields = {{"a"}, {"b"}, {"c"}, {"d"}, {"e"}};
  Record r(s);
  r[0] = "quote\" back\\ nl\n ctl\x01 \xc3\xa9 bad\xff";
  r[1] = -42;
  r[2] = 3.25;
  r[3] = Value(Object{{"k", Value(List{Value(1), Value("x")})}});
  EXPECT_EQ(compact_json_size(r), to_json(r, false, JsonStyle::Compact).size());
}

TEST(Flatten, NestedKeysIndexesAndNames) {
  Schema s;
  s.name = "F";
  s.fields = {{"obj1"}, {"list"}, {"plain"}, {"gone"}};
  Record r(s);
  r[0] = Value(Object{{"name", Value("TestModelName")}, {"test_obj", Value(1)}});
  r[1] = Value(List{Value(5), Value(Object{{"x", Value(2)}})});
  r[2] = "p";
  std::string out;
  JsonWriter(out, JsonStyle::Python).flat_record(r);
  EXPECT_EQ(out, R"({"obj1.TestModelName.test_obj": 1, "list.0": 5, "list.1.x": 2, "plain": "p"})");
}

}  // namespace
}  // namespace gcm
