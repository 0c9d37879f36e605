// Every gcm command's line in `gcm --help` is one short line; the paragraph belongs to `gcm <command> --help`.
#include "cli/command_registry.h"

#include <gtest/gtest.h>

namespace gcm {
namespace {

TEST(CommandRegistry, EveryCommandHasAOneLineSummaryAndAParagraph) {
  ASSERT_GE(app_command_registry().size(), 20u);
  for (const auto& [name, spec] : app_command_registry()) {
    EXPECT_FALSE(spec.summary.empty()) << name;
    EXPECT_LE(spec.summary.size(), 75u) << name << ": " << spec.summary;
    EXPECT_EQ(spec.summary.find('\n'), std::string::npos) << name;
    EXPECT_NE(spec.summary.back(), '.') << name << ": a summary is a line, not a sentence";
    EXPECT_GE(spec.help.size(), spec.summary.size()) << name;
  }
}

}  // namespace
}  // namespace gcm
