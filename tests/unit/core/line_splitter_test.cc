// LineSplitter: a line longer than the limit is skipped and counted, also when it spans chunks.
#include "core/line_splitter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gcm {
namespace {

TEST(LineSplitter, LongLinesAreSkippedAndCountedAcrossChunks) {
  LineSplitter s(4);
  std::vector<std::string> got;
  std::vector<std::pair<size_t, size_t>> longs;
  auto line = [&](std::string_view l) { got.emplace_back(l); };
  auto long_line = [&](size_t n, size_t bytes) { longs.emplace_back(n, bytes); };
  s.feed("ab\nabcd\nabc", line, long_line);
  s.feed("de\nx", line, long_line);  // "abcde": 5 bytes over two chunks
  s.feed("yz", line, long_line);
  s.feed("12345678", line, long_line);  // the last line, without "\n", also too long
  s.finish(line, long_line);
  EXPECT_EQ(got, (std::vector<std::string>{"ab", "abcd"}));
  EXPECT_EQ(longs, (std::vector<std::pair<size_t, size_t>>{{3, 5}, {4, 11}}));
  EXPECT_EQ(s.lines(), 4u);
  EXPECT_EQ(s.long_lines(), 2u);
}

}  // namespace
}  // namespace gcm
