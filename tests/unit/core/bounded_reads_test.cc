// Bounded reads of host data: maximum line lengths (longer lines skipped and counted), deadlines for readers that
// could block (a FIFO), byte caps for devices without end (/dev/zero).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/file_lines.h"
#include "core/line_splitter.h"
#include "core/subprocess.h"
#include "health/checks/host_check.h"
#include "health/kernel_log.h"

namespace gcm {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::string temp_path(const std::string& stem) {
  return (std::filesystem::temp_directory_path() / (stem + std::to_string(::getpid()))).string();
}

// A FIFO with a writer that holds it open and sends nothing: a reader waits for data forever.
struct SilentFifo {
  std::string path = temp_path("gcm-fifo-");
  int writer = -1;
  SilentFifo() {
    ::unlink(path.c_str());
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    writer = ::open(path.c_str(), O_RDWR | O_CLOEXEC);  // O_RDWR: a FIFO end that opens without a peer
    EXPECT_GE(writer, 0);
  }
  ~SilentFifo() {
    ::close(writer);
    ::unlink(path.c_str());
  }
};

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

TEST(KernelLogLimits, DevZeroIsNotAKernelRingBuffer) {
  auto start = Clock::now();
  try {
    health::scan_kernel_log("/dev/zero", [](const health::KernelLogLine&) {});  // the default cap, 256 MiB
    ADD_FAILURE() << "no error";
  } catch (const health::KernelLogError& e) {
    EXPECT_NE(std::string(e.what()).find("not a kernel ring buffer"), std::string::npos) << e.what();
  }
  EXPECT_LT(Clock::now() - start, 60s);
  health::KernelLogLimits timed;
  timed.deadline = Clock::now() + 200ms;
  timed.max_device_bytes = SIZE_MAX;
  try {
    health::scan_kernel_log(
        "/dev/zero", [](const health::KernelLogLine&) {}, timed);
    ADD_FAILURE() << "no error";
  } catch (const health::KernelLogError& e) {
    EXPECT_NE(std::string(e.what()).find("deadline"), std::string::npos) << e.what();
  }
}

TEST(KernelLogLimits, ASilentFifoStopsAtTheDeadline) {
  SilentFifo fifo;
  health::KernelLogLimits limits;
  limits.deadline = Clock::now() + 300ms;
  try {
    health::scan_kernel_log(
        fifo.path, [](const health::KernelLogLine&) {}, limits);
    ADD_FAILURE() << "no error";
  } catch (const health::KernelLogError& e) {
    EXPECT_NE(std::string(e.what()).find("deadline"), std::string::npos) << e.what();
  }
}

TEST(KernelLogLimits, LongLinesAreSkippedAndCounted) {
  std::string path = temp_path("gcm-kmsg-long-");
  {
    std::ofstream out(path);
    out << "[ 1.0] NVRM: Xid (PCI:0000:0d:00): 31, pid=1\n" << std::string(2u << 20, 'y') << "\n[ 2.0] tail\n";
  }
  std::vector<std::string> got;
  health::KernelLogScan scan =
      health::scan_kernel_log(path, [&](const health::KernelLogLine& l) { got.emplace_back(l.message); });
  std::filesystem::remove(path);
  EXPECT_EQ(scan.long_lines, 1u);
  EXPECT_EQ(got, (std::vector<std::string>{"NVRM: Xid (PCI:0000:0d:00): 31, pid=1", "tail"}));
}

TEST(SubprocessLines, ALongLineOfOutputIsSkippedAndReported) {
  CommandSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo a; head -c 3000000 /dev/zero | tr '\\0' x; echo; echo b"};
  spec.max_line = 1u << 20;
  std::vector<std::pair<size_t, size_t>> longs;
  spec.on_long_line = [&](size_t n, size_t bytes) { longs.emplace_back(n, bytes); };
  std::vector<std::string> got;
  size_t n = stream_command_lines(spec, [&](std::string_view l) { got.emplace_back(l); });
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(longs, (std::vector<std::pair<size_t, size_t>>{{2, 3000000}}));
}

// A host file read whole (sysfs, procfs, manifests): /dev/zero given as one was read until memory ran out, and a FIFO
// without data blocked the check.
TEST(HostFile, ReadWholeIsBoundedAndNeverBlocks) {
  EXPECT_FALSE(health::read_file("/dev/zero")) << "an endless file was accepted";
  std::string big = temp_path("gcm-bigfile-");
  {
    std::ofstream out(big, std::ios::binary);
    out << std::string(health::kMaxHostFileBytes + 1, 'x');
  }
  EXPECT_FALSE(health::read_file(big));
  std::ofstream(big, std::ios::binary | std::ios::trunc) << "1\n";
  EXPECT_EQ(health::read_file(big).value_or("<none>"), "1\n");
  ::unlink(big.c_str());
  SilentFifo fifo;
  auto start = Clock::now();
  EXPECT_EQ(health::read_file(fifo.path).value_or("<none>"), "");
  EXPECT_LT(Clock::now() - start, 5s);
}

}  // namespace
}  // namespace gcm
