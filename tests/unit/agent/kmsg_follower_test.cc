// The kernel-log follower on a FIFO (standing in for /dev/kmsg), on a growing regular file, with an injected read
// function for the /dev/kmsg-only branches (EPIPE overflow, EINVAL), and on paths it cannot use.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include <spdlog/sinks/ostream_sink.h>

#include "agent/kmsg_follower.h"
#include "health/kernel_log.h"
#include "temp_dir.h"

namespace gcm::agent {
namespace {

using namespace std::chrono_literals;

struct Seen {
  uint64_t seq;
  std::string message;
  size_t dict;
  std::optional<int> xid;
  std::string device;
};

// What the callback received, readable from the test's thread.
class Collector {
 public:
  KmsgFollower::Callback callback() {
    return [this](const KmsgRecord& r, const std::optional<health::XidLine>& x) {
      std::lock_guard lock(mu_);
      seen_.push_back({r.seq, std::string(r.message), r.dict.size(), x ? x->code : std::nullopt,
                       x ? std::string(x->device) : std::string()});
    };
  }
  std::vector<Seen> seen() const {
    std::lock_guard lock(mu_);
    return seen_;
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return seen_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<Seen> seen_;
};

// Waits for a condition with a deadline: never a blind sleep.
template <typename Pred>
bool wait_until(Pred pred, std::chrono::milliseconds limit = 5000ms) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(2ms);
  }
  return pred();
}

using gcm::testing::TempDir;

KmsgFollowerOptions fast(const std::string& path) {
  KmsgFollowerOptions o;
  o.path = path;
  o.poll_interval = 50ms;
  o.retry_initial = 10ms;
  o.retry_max = 40ms;
  return o;
}

// Measures stop(): it must return promptly whatever the follower was waiting on.
std::chrono::milliseconds timed_stop(KmsgFollower& f) {
  auto t0 = std::chrono::steady_clock::now();
  f.stop();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
}

void write_fifo(const std::string& path, const std::string& text) {
  std::ofstream out(path);  // blocks until the follower has the FIFO open for reading
  out << text;
}

TEST(KmsgFollower, FollowsAFifoAcrossWritersWithDictionariesAndXids) {
  TempDir dir;
  std::string fifo = dir.file("kmsg");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Collector c;
  KmsgFollower f(fast(fifo), c.callback());
  f.start();
  write_fifo(fifo,
             "6,1,100,-;first\n"
             "3,2,200,-;nvidia 0000:3b:00.0: bad\n SUBSYSTEM=pci\n DEVICE=+pci:0000:3b:00.0\n"
             "4,3,300,-;NVRM: Xid (PCI:0000:3b:00): 48, pid=1, DBE\n");
  // The writer closed: the follower reopens to wait for the next one instead of spinning on the closed FIFO.
  ASSERT_TRUE(wait_until([&] { return c.size() == 3 && f.stats().reopens >= 1; })) << c.size();
  write_fifo(fifo,
             "4,4,400,-;NVRM: The NVIDIA GPU 0000:3c:00.0 (PCI ID: 10de:20b2)\n"
             "4,5,401,-;NVRM: installed in this system has\n"
             "4,6,402,-;NVRM: fallen off the bus and is not responding to commands.\n");
  // The second writer left too: once the follower has reopened after it, the stats below hold still.
  ASSERT_TRUE(wait_until([&] {
    KmsgFollowerStats now = f.stats();
    return c.size() == 6 && now.reopens >= 2 && now.open;
  })) << c.size();
  auto s = c.seen();
  EXPECT_EQ(s[0].message, "first");
  EXPECT_EQ(s[1].dict, 2u);
  EXPECT_EQ(s[2].xid, 48);
  EXPECT_EQ(s[2].device, "PCI:0000:3b:00");
  EXPECT_FALSE(s[3].xid);
  EXPECT_EQ(s[5].xid, 79);  // the multi-line form names its GPU on the first line
  EXPECT_EQ(s[5].device, "0000:3c:00.0");
  KmsgFollowerStats st = f.stats();
  EXPECT_EQ(st.records, 6u);
  EXPECT_EQ(st.xids, 2u);
  EXPECT_EQ(st.bad_records, 0u);
  EXPECT_TRUE(st.open);
  // One reopen per writer that left (a spin would reopen thousands of times).
  EXPECT_LE(st.reopens, 2u);
  EXPECT_LT(timed_stop(f), 1000ms);
}

TEST(KmsgFollower, StopIsPromptWhileWaitingForAWriter) {
  TempDir dir;
  std::string fifo = dir.file("kmsg");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Collector c;
  KmsgFollowerOptions o = fast(fifo);
  o.poll_interval = 5000ms;  // stop() must not wait for the poll's timeout
  KmsgFollower f(o, c.callback());
  f.start();
  ASSERT_TRUE(wait_until([&] { return f.stats().open; }));
  EXPECT_LT(timed_stop(f), 1000ms);
  EXPECT_FALSE(f.stats().open);
}

TEST(KmsgFollower, ReadsARegularFileThenFollowsItsGrowth) {
  TempDir dir;
  std::string path = dir.file("kmsg.log");
  std::ofstream(path) << "6,10,1,-;one\n SUBSYSTEM=pci\n6,11,2,-;two\n";
  Collector c;
  KmsgFollower f(fast(path), c.callback());
  f.start();
  // "two" is complete once the file has been idle for one poll interval.
  ASSERT_TRUE(wait_until([&] { return c.size() == 2; })) << c.size();
  std::ofstream(path, std::ios::app) << "6,12,3,-;NVRM: Xid (PCI:0000:0d:00): 13, Graphics Exception\n";
  ASSERT_TRUE(wait_until([&] { return c.size() == 3; })) << c.size();
  auto s = c.seen();
  EXPECT_EQ(s[0].dict, 1u);
  EXPECT_EQ(s[1].message, "two");
  EXPECT_EQ(s[2].seq, 12u);
  EXPECT_EQ(s[2].xid, 13);
  EXPECT_LT(timed_stop(f), 1000ms);
}

TEST(KmsgFollower, FindsTheXidsTheCheckFindsInTheKmsgFixture) {
  std::string path = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/health/kernel-log/xid-kmsg.txt";
  health::XidScanner scanner;
  health::scan_kernel_log(path, [&](const health::KernelLogLine& l) { scanner.feed(l.message); });
  int expected = 0;
  for (const auto& f : scanner.findings()) expected += f.count;
  ASSERT_GT(expected, 0);
  Collector c;
  KmsgFollower f(fast(path), c.callback());
  f.start();
  ASSERT_TRUE(wait_until([&] { return f.stats().xids == static_cast<uint64_t>(expected); })) << f.stats().xids;
  f.stop();
  EXPECT_EQ(f.stats().bad_records, 0u);
  EXPECT_EQ(c.seen()[2].dict, 2u);  // SUBSYSTEM and DEVICE of the first XID's record
}

TEST(KmsgFollower, SkipsAndCountsLongRecordsAndBadLines) {
  TempDir dir;
  std::string path = dir.file("kmsg.log");
  std::string big(10000, 'x');
  std::ofstream(path) << " ORPHAN=1\n"                                // a dictionary line of no record
                      << "6,1,1,-;" << big << "\n SUBSYSTEM=pci\n"    // too long: its dictionary goes with it
                      << "6,2,2,-;short\n SUBSYSTEM=" << big << "\n"  // too long through its dictionary
                      << "not a record\n"
                      << "6,3,3,-;kept\n";
  Collector c;
  KmsgFollowerOptions o = fast(path);
  o.max_record = 8192;
  KmsgFollower f(o, c.callback());
  f.start();
  ASSERT_TRUE(wait_until([&] { return c.size() == 1 && f.stats().bad_records == 2; }));
  KmsgFollowerStats st = f.stats();
  EXPECT_EQ(c.seen()[0].message, "kept");
  EXPECT_EQ(st.long_records, 2u);
  EXPECT_EQ(st.bad_records, 2u);  // the orphan dictionary line and "not a record"
  EXPECT_NE(st.last_bad_record.find("ending in ';'"), std::string::npos) << st.last_bad_record;
  EXPECT_NE(st.last_bad_record.find("not a record"), std::string::npos) << st.last_bad_record;
}

// A scripted read(): each step is a record, or -1 with an errno.
struct Step {
  std::string record;
  int err = 0;
};
KmsgFollower::ReadFn scripted(std::deque<Step>& steps) {
  return [&steps](char* buf, size_t len) -> ssize_t {
    if (steps.empty()) {
      errno = EAGAIN;
      return -1;
    }
    Step s = steps.front();
    steps.pop_front();
    if (s.err) {
      errno = s.err;
      return -1;
    }
    size_t n = std::min(len, s.record.size());
    std::copy_n(s.record.data(), n, buf);
    return static_cast<ssize_t>(s.record.size() > len ? len : n);
  };
}

TEST(KmsgFollower, OverflowIsCountedAndReadingGoesOn) {
  Collector c;
  KmsgFollower f(fast("/nonexistent"), c.callback());
  std::deque<Step> steps = {{"6,1,1,-;a\n"}, {"", EINTR}, {"6,2,2,-;b\n"}, {"", EPIPE}, {"6,7,7,-;c\n SUBSYSTEM=pci\n"},
                            {"6,8,8,-;d\n"}};
  EXPECT_EQ(f.drain_device(scripted(steps)), 0);
  EXPECT_TRUE(steps.empty());
  auto s = c.seen();
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[2].seq, 7u);
  EXPECT_EQ(s[2].dict, 1u);
  KmsgFollowerStats st = f.stats();
  EXPECT_EQ(st.overflows, 1u);
  EXPECT_EQ(st.records_lost, 4u);  // 3, 4, 5 and 6 were overwritten
}

TEST(KmsgFollower, DeviceRecordTooLongIsSkippedAndARealErrorEndsTheDrain) {
  Collector c;
  KmsgFollowerOptions o = fast("/nonexistent");
  o.max_record = 64;
  KmsgFollower f(o, c.callback());
  std::deque<Step> steps = {{"", EINVAL},  // the kernel's answer to a buffer too small for the record
                            {"6,1,1,-;" + std::string(100, 'y')},
                            {"6,2,2,-;fits\n"},
                            {"", EIO},
                            {"6,3,3,-;never read\n"}};
  EXPECT_EQ(f.drain_device(scripted(steps)), EIO);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c.seen()[0].message, "fits");
  EXPECT_EQ(f.stats().long_records, 2u);
  EXPECT_EQ(steps.size(), 1u);
}

TEST(KmsgFollower, ACharacterDeviceThatIsNoKernelLogIsAnErrorNotASpin) {
  Collector c;
  KmsgFollower f(fast("/dev/zero"), c.callback());
  f.start();
  ASSERT_TRUE(wait_until([&] { return f.stats().last_error.find("not /dev/kmsg") != std::string::npos; }))
      << f.stats().last_error;
  EXPECT_EQ(c.size(), 0u);
  EXPECT_LT(timed_stop(f), 1000ms);
}

TEST(KmsgFollower, MissingPathIsLoggedOnceRetriedAndRecovers) {
  TempDir dir;
  std::string path = dir.file("later.log");
  std::ostringstream log_text;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_text);
  Collector c;
  KmsgFollowerOptions o = fast(path);
  o.log = std::make_shared<spdlog::logger>("kmsg-test", sink);
  KmsgFollower f(o, c.callback());
  f.start();
  ASSERT_TRUE(wait_until([&] { return f.stats().open_errors >= 3; }));
  KmsgFollowerStats st = f.stats();
  EXPECT_FALSE(st.open);
  EXPECT_NE(st.last_error.find(path), std::string::npos) << st.last_error;
  EXPECT_NE(st.last_error.find("No such file"), std::string::npos) << st.last_error;
  std::ofstream(path) << "6,1,1,-;arrived\n";
  ASSERT_TRUE(wait_until([&] { return c.size() == 1; }));
  EXPECT_TRUE(f.stats().open);
  f.stop();
  sink->flush();
  std::string text = log_text.str();
  size_t lines = 0;
  for (size_t p = text.find("cannot open"); p != std::string::npos; p = text.find("cannot open", p + 1)) ++lines;
  EXPECT_EQ(lines, 1u) << text;
  EXPECT_NE(text.find("reading " + path + " again"), std::string::npos) << text;
}

TEST(KmsgFollower, ADirectoryIsRefusedWithAClearError) {
  TempDir dir;
  std::filesystem::create_directory(dir.file("d"));
  Collector c;
  KmsgFollower f(fast(dir.file("d")), c.callback());
  f.start();
  ASSERT_TRUE(wait_until([&] { return f.stats().open_errors >= 1; }));
  EXPECT_NE(f.stats().last_error.find("neither a character device"), std::string::npos) << f.stats().last_error;
}

TEST(KmsgFollower, ReadsTheRealKernelRingBufferWhenReadable) {
  if (::access("/dev/kmsg", R_OK) != 0) GTEST_SKIP() << "/dev/kmsg is not readable here";
  Collector c;
  KmsgFollower f(fast("/dev/kmsg"), c.callback());
  f.start();
  ASSERT_TRUE(wait_until([&] { return c.size() > 0 || !f.stats().last_error.empty(); }));
  if (c.size() == 0) GTEST_SKIP() << f.stats().last_error;  // e.g. EPERM in a container without CAP_SYSLOG
  EXPECT_LT(timed_stop(f), 1000ms);
  KmsgFollowerStats st = f.stats();
  EXPECT_EQ(st.bad_records, 0u) << st.last_bad_record;  // every record the kernel writes parses
  auto s = c.seen();
  for (size_t i = 1; i < s.size(); ++i) ASSERT_GT(s[i].seq, s[i - 1].seq) << i;
}

TEST(KmsgFollower, UnixTimeOfAStampIsBootTimePlusTheStamp) {
  double a = kmsg_unix_time(0), b = kmsg_unix_time(5'000'000);
  EXPECT_NEAR(b - a, 5.0, 0.01);
  double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_LT(a, now);
  EXPECT_GT(a, 1.0e9);  // after 2001: the realtime clock, not the monotonic one
}

}  // namespace
}  // namespace gcm::agent
