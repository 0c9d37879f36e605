// Bounded reads of host files: longer lines skipped and counted, deadlines for readers that could block (a FIFO),
// byte caps for devices without end (/dev/zero).
#include "core/file_lines.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "silent_fifo.h"

namespace gcm {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using gcm::testing::SilentFifo;
using gcm::testing::temp_path;

TEST(FileLines, AHundredMegabyteLineIsSkippedNotHeld) {
  std::string path = temp_path("gcm-longline-");
  {
    std::ofstream out(path);
    out << "first\n" << std::string(3u << 20, 'x') << "\nLost carrier\n";
  }
  std::vector<std::string> got;
  LineReadLimits limits;
  limits.max_line = 1u << 20;
  FileLineCounts c = for_each_file_line(
      path, [&](std::string_view l) { got.emplace_back(l); }, limits);
  std::filesystem::remove(path);
  EXPECT_EQ(got, (std::vector<std::string>{"first", "Lost carrier"}));
  EXPECT_EQ(c.lines, 3u);
  EXPECT_EQ(c.long_lines, 1u);
  EXPECT_EQ(c.bytes, 6u + (3u << 20) + 1 + 13);
}

TEST(FileLines, ASilentFifoStopsAtTheDeadline) {
  SilentFifo fifo;
  LineReadLimits limits;
  limits.deadline = Clock::now() + 300ms;
  auto start = Clock::now();
  try {
    for_each_file_line(
        fifo.path, [](std::string_view) {}, limits);
    ADD_FAILURE() << "no error";
  } catch (const FileReadError& e) {
    EXPECT_NE(std::string(e.what()).find("deadline"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fifo.path), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - start, 5s);
}

TEST(FileLines, AFifoWithoutWriterIsAnEmptyFileNotAHang) {
  std::string path = temp_path("gcm-fifo-nowriter-");
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  FileLineCounts c = for_each_file_line(path, [](std::string_view) {});
  ::unlink(path.c_str());
  EXPECT_EQ(c.lines, 0u);
}

TEST(FileLines, DevZeroIsBoundedByBytesAndDeadline) {
  LineReadLimits limits;
  limits.max_bytes = 4u << 20;
  EXPECT_THROW(for_each_file_line(
                   "/dev/zero", [](std::string_view) {}, limits),
               FileReadError);
  LineReadLimits timed;
  timed.deadline = Clock::now() + 200ms;
  auto start = Clock::now();
  EXPECT_THROW(for_each_file_line(
                   "/dev/zero", [](std::string_view) {}, timed),
               FileReadError);
  EXPECT_LT(Clock::now() - start, 5s);
}

}  // namespace
}  // namespace gcm
