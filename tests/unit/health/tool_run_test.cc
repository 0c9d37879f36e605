// The words of an option that holds a command line (health/tool_run.h).
#include <gtest/gtest.h>

#include "health/tool_run.h"

namespace gcm::health {
namespace {

TEST(SplitWords, QuotesGroup) {
  EXPECT_EQ(split_words("  -a 'b c'  \"d e\" f"), (std::vector<std::string>{"-a", "b c", "d e", "f"}));
  EXPECT_TRUE(split_words("   ").empty());
}

}  // namespace
}  // namespace gcm::health
