#include "core/json_limits.h"

#include <gtest/gtest.h>

#include <string>

#include "collectors/slurm_monitor.h"
#include "slurm/sdiag.h"
#include "health/checks/manifest.h"
#include "health/checks/smartctl.h"
#include "health/dcgmi_output.h"
#include "slurm/parse_error.h"

namespace gcm {
namespace {

// The attack of the issue: 100 000 nested arrays overflowed the stack of every nlohmann::json user.
std::string deep_arrays(size_t n = 100000) { return std::string(n, '[') + std::string(n, ']'); }

// n nested objects {"a":{"a":...1...}}.
std::string deep_objects(size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += R"({"a":)";
  s += "1";
  s += std::string(n, '}');
  return s;
}

TEST(JsonLimits, DeepNestingIsRefusedBeforeParsingNamingTheLimit) {
  auto e = json_depth_error(deep_arrays());
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e, "JSON nested deeper than 128 levels (at byte 128)");
  std::string why;
  EXPECT_TRUE(parse_json_limited(deep_arrays(), &why).is_discarded());
  EXPECT_EQ(why, *e);
  EXPECT_TRUE(parse_json_limited(deep_objects(100000)).is_discarded());
  EXPECT_THROW(parse_json_limited_or_throw(deep_arrays()), JsonInputError);
}

TEST(JsonLimits, TheLimitItselfIsAccepted) {
  EXPECT_FALSE(json_depth_error(deep_arrays(kJsonMaxDepth)).has_value());
  EXPECT_TRUE(json_depth_error(deep_arrays(kJsonMaxDepth + 1)).has_value());
  auto j = parse_json_limited_or_throw(deep_objects(kJsonMaxDepth));
  EXPECT_TRUE(j.is_object());
  JsonLimits three;
  three.max_depth = 3;
  EXPECT_FALSE(json_depth_error("[[[]]]", three).has_value());
  EXPECT_EQ(json_depth_error("[[[[]]]]", three), "JSON nested deeper than 3 levels (at byte 3)");
  // Siblings do not add up: only nesting counts.
  EXPECT_FALSE(json_depth_error("[[[]],[[]],{\"a\":[]}]", three).has_value());
}

TEST(JsonLimits, BracketsInStringsAndCommentsDoNotCount) {
  JsonLimits one;
  one.max_depth = 1;
  EXPECT_FALSE(json_depth_error(R"(["[[[{{{", "\"[[[", "\\", "{"])", one).has_value());
  // An escaped backslash ends the escape: the quote after it closes the string, so the bracket after it counts.
  EXPECT_TRUE(json_depth_error(R"(["\\", [1]])", one).has_value());
  JsonLimits comments = one;
  comments.ignore_comments = true;
  EXPECT_FALSE(json_depth_error("[1, // [[[\n 2 /* {{{ */]", comments).has_value());
  auto j = parse_json_limited_or_throw("[1, // [[[\n 2 /* {{{ */]", comments);
  EXPECT_EQ(j.size(), 2u);
  // Without comments the slashes are no comment: the brackets count (and the parser would refuse the text anyway).
  EXPECT_TRUE(json_depth_error("[1, // [[[\n 2]", one).has_value());
}

TEST(JsonLimits, SyntaxErrorsKeepTheParsersMessage) {
  std::string why;
  EXPECT_TRUE(parse_json_limited("{\"a\": ", &why).is_discarded());
  EXPECT_NE(why.find("parse error"), std::string::npos) << why;
  EXPECT_TRUE(parse_json_limited("[1e999999]").is_discarded());  // out_of_range inside nlohmann: no exception out
  EXPECT_THROW(parse_json_limited_or_throw(""), JsonInputError);
}

// Every reader of JSON from the host refuses the attack with an error naming the depth limit (they crashed before).
TEST(JsonLimits, EveryHostJsonReaderRefusesDeepNesting) {
  auto names_limit = [](const std::exception& e) {
    return std::string(e.what()).find("nested deeper than 128 levels") != std::string::npos;
  };
  std::string deep = "{\"pci\": " + deep_arrays() + "}";
  try {
    health::parse_manifest(deep, "m.json");
    ADD_FAILURE() << "a manifest 100 000 levels deep was accepted";
  } catch (const health::ManifestError& e) {
    EXPECT_TRUE(names_limit(e)) << e.what();
    EXPECT_NE(std::string(e.what()).find("m.json"), std::string::npos) << e.what();
  }
  try {
    health::parse_smartctl_json(deep_arrays(), "nvme0");
    ADD_FAILURE() << "deep smartctl output was accepted";
  } catch (const health::SmartctlError& e) {
    EXPECT_TRUE(names_limit(e)) << e.what();
  }
  try {
    slurm::parse_sdiag_json(deep_arrays());
    ADD_FAILURE() << "deep sdiag --json output was accepted";
  } catch (const slurm::ParseError& e) {
    EXPECT_TRUE(names_limit(e)) << e.what();
  }
  // A test name that is not a string is dumped into the verdict: a recursion as deep as the value.
  std::string diag = R"({"DCGM GPU Diagnostic": {"test_categories": [{"tests": [{"name": )" + deep_arrays() + "}]}]}}";
  EXPECT_EQ(health::evaluate_dcgmi_diag(diag, {}).code, health::ExitCode::WARN);
}

}  // namespace
}  // namespace gcm
