// The kernel-log reader: kmsg records, dmesg and plain lines, and its bounds.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "health/kernel_log.h"
#include "silent_fifo.h"

namespace gcm::health {
namespace {

TEST(KernelLog, ReadsKmsgRecordsDmesgLinesAndPlainLines) {
  auto k = parse_kernel_log_line("4,2001,5000000123,-;NVRM: Xid (PCI:0000:0d:00): 31, pid=1");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->message, "NVRM: Xid (PCI:0000:0d:00): 31, pid=1");
  ASSERT_TRUE(k->uptime_s);
  EXPECT_NEAR(*k->uptime_s, 5000.000123, 1e-6);
  EXPECT_FALSE(parse_kernel_log_line(" SUBSYSTEM=pci"));  // continuation of a record
  auto d = parse_kernel_log_line("[ 1234.567890] NVRM: hello");
  ASSERT_TRUE(d && d->uptime_s);
  EXPECT_EQ(d->message, "NVRM: hello");
  EXPECT_NEAR(*d->uptime_s, 1234.56789, 1e-6);
  auto t = parse_kernel_log_line("[Fri Oct 14 14:56:49 2022] NVRM: hi");  // dmesg -T: no uptime
  ASSERT_TRUE(t);
  EXPECT_EQ(t->message, "NVRM: hi");
  EXPECT_FALSE(t->uptime_s);
  auto s = parse_kernel_log_line("Oct 14 15:01:00 node1 kernel: text");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->message, "Oct 14 15:01:00 node1 kernel: text");
  // Digits that are not a record header stay text.
  auto n = parse_kernel_log_line("12 monkeys; and more");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->message, "12 monkeys; and more");
}

TEST(KernelLog, MissingFileNamesThePath) {
  try {
    KernelLog::read("/nonexistent/kmsg");
    FAIL() << "no error";
  } catch (const KernelLogError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/kmsg"), std::string::npos);
  }
}

}  // namespace
}  // namespace gcm::health

// The kernel log's reader is bounded: /dev/zero is no ring buffer, a silent FIFO ends at the deadline, long lines are
// skipped and counted.
namespace gcm::health {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using gcm::testing::SilentFifo;
using gcm::testing::temp_path;

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

}  // namespace
}  // namespace gcm::health
