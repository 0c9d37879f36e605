// Strings from the host on their way into verdicts and records: valid UTF-8, no control characters, bounded.
#include "core/host_text.h"

#include <gtest/gtest.h>

#include <string>

#include "core/json.h"
#include "health/check.h"
#include "otlp/encode.h"

namespace gcm {
namespace {

// A binary sysfs attribute of the issue: 3 MB with NULs, escape sequences and bytes that are not UTF-8.
std::string binary_value() {
  std::string s;
  for (size_t i = 0; i < (3u << 20); ++i) s.push_back(static_cast<char>(i * 37 % 256));
  return s;
}

bool has_controls(std::string_view s, bool allow_lines) {
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 || c == 0x7f) && !(allow_lines && (c == '\n' || c == '\t'))) return true;
  }
  return false;
}

TEST(HostText, ABinaryValueBecomesShortValidText) {
  std::string v = host_value(binary_value());
  EXPECT_LE(v.size(), kMaxHostValueBytes + 32);
  EXPECT_TRUE(is_valid_utf8(v));
  EXPECT_FALSE(has_controls(v, false));
  EXPECT_NE(v.find("... (3145728 bytes)"), std::string::npos) << v;
}

TEST(HostText, ControlsAreEscapedAndValidTextKept) {
  EXPECT_EQ(host_value("x16"), "x16");
  EXPECT_EQ(host_value("16.0 GT/s PCIe"), "16.0 GT/s PCIe");
  EXPECT_EQ(host_value("a\nb\x1b[2J\x7f"), "a\\x0ab\\x1b[2J\\x7f");
  EXPECT_EQ(host_value("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(host_value("bad\xff"), "bad\xef\xbf\xbd");
  EXPECT_EQ(host_value("abcdef", 3), "abc... (6 bytes)");
  // A cut never splits a UTF-8 sequence.
  EXPECT_EQ(host_value("\xc3\xa9\xc3\xa9", 3), "\xc3\xa9... (4 bytes)");
  EXPECT_EQ(bounded_message("line 1\nline\t2\x01"), "line 1\nline\t2\\x01");
}

TEST(HostText, EveryVerdictIsBoundedValidUtf8) {
  health::CheckRun run;
  std::string shown;
  run.on_output = [&](const std::string&, const health::CheckOutcome& o) { shown = o.msg; };
  run.run_standard("pci", "", [] {
    return health::CheckOutcome{health::ExitCode::CRITICAL, "degraded: '" + binary_value() + "'\nnext"};
  });
  EXPECT_LE(shown.size(), kMaxMessageBytes + 32);
  EXPECT_TRUE(is_valid_utf8(shown));
  EXPECT_FALSE(has_controls(shown, true));
  EXPECT_EQ(shown.rfind("degraded: '", 0), 0u) << shown.substr(0, 40);
}

TEST(HostText, OtlpStringsAreAlwaysUtf8) {
  opentelemetry::proto::common::v1::AnyValue v;
  otlp::to_any_value(Value(std::string("GPU-\xff\xfe serial")), &v);
  EXPECT_TRUE(is_valid_utf8(v.string_value()));
  EXPECT_EQ(v.string_value(), "GPU-\xef\xbf\xbd\xef\xbf\xbd serial");
  google::protobuf::RepeatedPtrField<opentelemetry::proto::common::v1::KeyValue> attrs;
  otlp::add_attribute(&attrs, "k\xc0", Value(std::string("ok")));
  EXPECT_TRUE(is_valid_utf8(attrs.Get(0).key()));
}

}  // namespace
}  // namespace gcm
