// The host checks' shared readers: a host file read whole is bounded and never blocks.
#include "health/checks/host_check.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>

#include "silent_fifo.h"

namespace gcm {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using gcm::testing::SilentFifo;
using gcm::testing::temp_path;

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
