// The agent's on-disk spool: order and acknowledgement across reopen, torn and corrupt tails, the size bound and
// what it drops, and the directory it refuses to trust.
#include "otlp/spool.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "otlp/spool_format.h"
#include "temp_dir.h"

namespace gcm::otlp {
namespace {

namespace fs = std::filesystem;
using gcm::testing::TempDir;

std::string payload(int i, size_t size = 100) {
  std::string p = "entry-" + std::to_string(i) + ":";
  p.resize(size, static_cast<char>('a' + i % 26));
  return p;
}

std::vector<fs::path> segments(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with("seg-")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// Pops every live entry and returns their payloads, oldest first.
std::vector<std::string> drain(Spool& s) {
  std::vector<std::string> out;
  while (auto e = s.front()) {
    out.push_back(e->bytes);
    s.pop_front(e->seq);
  }
  return out;
}

void flip_byte(const fs::path& file, uint64_t offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(c ^ 0x5a));
}

constexpr uint64_t kFrame = kFrameHeaderBytes + 100;  // one entry of payload(i)

TEST(Spool, EntriesComeBackInOrderAcrossReopenAndPopsAreKept) {
  TempDir tmp;
  std::string dir = tmp.file("spool");  // not there yet: open() creates it
  {
    auto s = Spool::open(dir, 1 << 20);
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(s->append(Signal::Metrics, 10 + i, payload(i)));
    auto e = s->front();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->bytes, payload(0));
    EXPECT_EQ(e->points, 10u);
    EXPECT_EQ(e->signal, Signal::Metrics);
    s->pop_front(e->seq);
  }
  auto s = Spool::open(dir, 1 << 20);
  EXPECT_EQ(s->stats().entries, 2u);
  EXPECT_EQ(s->stats().bytes, 3 * kFrame);  // the acknowledged entry shares the segment until it is all acked
  ASSERT_TRUE(s->append(Signal::Logs, 7, payload(3)));
  auto e = s->front();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->points, 11u);
  EXPECT_EQ(drain(*s), (std::vector<std::string>{payload(1), payload(2), payload(3)}));
  EXPECT_EQ(s->stats().entries, 0u);
  EXPECT_EQ(s->stats().bytes, 0u);
  EXPECT_TRUE(segments(dir).empty()) << "an empty spool keeps no segment";
}

TEST(Spool, NothingIsReplayedTwiceAfterAPopAndAReopen) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  uint64_t last_seq = 0;
  {
    auto s = Spool::open(dir, 1 << 20);
    for (int i = 0; i < 4; ++i) s->append(Signal::Metrics, 1, payload(i));
    auto got = drain(*s);
    ASSERT_EQ(got.size(), 4u);
    s->append(Signal::Metrics, 1, payload(4));
    last_seq = s->front()->seq;
    s->pop_front(last_seq);
  }
  {
    auto s = Spool::open(dir, 1 << 20);
    EXPECT_FALSE(s->front());
    s->append(Signal::Metrics, 1, payload(5));
    auto e = s->front();
    ASSERT_TRUE(e);
    EXPECT_GT(e->seq, last_seq) << "numbers continue past the acknowledged ones even with no segment left";
    EXPECT_EQ(e->bytes, payload(5));
  }
  auto s = Spool::open(dir, 1 << 20);
  EXPECT_EQ(drain(*s), std::vector<std::string>{payload(5)});
}

TEST(Spool, ATornTailIsCutOffCountedAndAppendingGoesOn) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  {
    auto s = Spool::open(dir, 1 << 20);
    for (int i = 0; i < 3; ++i) s->append(Signal::Metrics, 1, payload(i));
  }
  auto segs = segments(dir);
  ASSERT_EQ(segs.size(), 1u);
  fs::resize_file(segs[0], 3 * kFrame - 5);  // the third write cut short by a crash
  {
    auto s = Spool::open(dir, 1 << 20);
    EXPECT_EQ(s->stats().corrupt_tails, 1u);
    EXPECT_EQ(s->stats().entries, 2u);
    EXPECT_EQ(fs::file_size(segs[0]), 2 * kFrame) << "the torn bytes are truncated away";
    s->append(Signal::Metrics, 1, payload(9));
  }
  auto s = Spool::open(dir, 1 << 20);
  EXPECT_EQ(s->stats().corrupt_tails, 0u);
  EXPECT_EQ(drain(*s), (std::vector<std::string>{payload(0), payload(1), payload(9)}));
}

TEST(Spool, ACorruptCrcStopsItsSegmentThereAndIsCounted) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  {
    auto s = Spool::open(dir, 1 << 20);
    for (int i = 0; i < 3; ++i) s->append(Signal::Metrics, 1, payload(i));
  }
  auto segs = segments(dir);
  ASSERT_EQ(segs.size(), 1u);
  flip_byte(segs[0], kFrame + kFrameHeaderBytes + 50);  // in the second entry's payload
  auto s = Spool::open(dir, 1 << 20);
  EXPECT_EQ(s->stats().corrupt_tails, 1u);
  EXPECT_EQ(drain(*s), std::vector<std::string>{payload(0)}) << "framing after a bad entry cannot be trusted";
}

TEST(Spool, ACorruptEntryDoesNotCostTheSegmentsAfterIt) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  // max_bytes / 16 is smaller than one entry: one entry per segment.
  uint64_t max = 10 * kFrame;
  {
    auto s = Spool::open(dir, max);
    for (int i = 0; i < 3; ++i) s->append(Signal::Metrics, 1, payload(i));
  }
  auto segs = segments(dir);
  ASSERT_EQ(segs.size(), 3u);
  flip_byte(segs[1], 20);  // the second entry's header (its seq)
  auto s = Spool::open(dir, max);
  EXPECT_EQ(s->stats().corrupt_tails, 1u);
  EXPECT_EQ(drain(*s), (std::vector<std::string>{payload(0), payload(2)}));
}

TEST(Spool, WhenFullTheOldestAreDroppedAndTheirPointsCounted) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  uint64_t max = 5 * kFrame;  // five entries, one per segment
  auto s = Spool::open(dir, max);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(s->append(Signal::Metrics, static_cast<uint64_t>(i + 1), payload(i)));
  auto st = s->stats();
  EXPECT_EQ(st.entries, 5u);
  EXPECT_LE(st.bytes, max);
  EXPECT_EQ(st.dropped_entries, 3u);
  EXPECT_EQ(st.dropped_points, 1u + 2u + 3u);
  EXPECT_EQ(st.refused_entries, 0u);
  s.reset();
  s = Spool::open(dir, max);  // the drops are acknowledged durably: not back after a restart
  EXPECT_EQ(drain(*s), (std::vector<std::string>{payload(3), payload(4), payload(5), payload(6), payload(7)}));
}

TEST(Spool, AnEntryLargerThanTheWholeSpoolIsRefusedAndCounted) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  auto s = Spool::open(dir, 4 * kFrame);
  s->append(Signal::Logs, 1, payload(0));
  EXPECT_FALSE(s->append(Signal::Logs, 42, std::string(4 * kFrame, 'x')));
  auto st = s->stats();
  EXPECT_EQ(st.refused_entries, 1u);
  EXPECT_EQ(st.dropped_entries, 1u);
  EXPECT_EQ(st.dropped_points, 42u);
  EXPECT_EQ(st.entries, 1u) << "refusing it dropped nothing else";
}

TEST(Spool, APopOfAnEntryDroppedMeanwhileAcknowledgesNothing) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  auto s = Spool::open(dir, 3 * kFrame);
  for (int i = 0; i < 3; ++i) s->append(Signal::Metrics, 1, payload(i));
  auto sending = s->front();
  ASSERT_EQ(sending->bytes, payload(0));
  s->append(Signal::Metrics, 1, payload(3));  // full: entry 0 is dropped while it is being sent
  s->pop_front(sending->seq);
  EXPECT_EQ(drain(*s), (std::vector<std::string>{payload(1), payload(2), payload(3)}));
}

TEST(Spool, TheOldestEntrysAppendTimeGivesTheAge) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  auto s = Spool::open(dir, 1 << 20);
  EXPECT_EQ(s->stats().oldest_unix_ms, 0);
  auto before =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  s->append(Signal::Metrics, 1, payload(0));
  s->append(Signal::Metrics, 1, payload(1));
  int64_t oldest = s->stats().oldest_unix_ms;
  EXPECT_GE(oldest, before);
  EXPECT_LE(oldest, before + 60000);
  s.reset();
  s = Spool::open(dir, 1 << 20);
  EXPECT_EQ(s->stats().oldest_unix_ms, oldest) << "the age survives a restart";
}

TEST(Spool, ANewDirectoryIs0700AndItsFiles0600) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  auto s = Spool::open(dir, 1 << 20);
  s->append(Signal::Metrics, 1, payload(0));
  EXPECT_EQ(fs::status(dir).permissions() & fs::perms::all, fs::perms::owner_all);
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(fs::status(e.path()).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write)
        << e.path();
}

TEST(Spool, UntrustedDirectoriesAreRefused) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  Spool::open(dir, 1 << 20).reset();
  ::chmod(dir.c_str(), 0777);
  EXPECT_THROW(Spool::open(dir, 1 << 20), SpoolError) << "world-writable";
  ::chmod(dir.c_str(), 0770);
  EXPECT_THROW(Spool::open(dir, 1 << 20), SpoolError) << "group-writable";
  ::chmod(dir.c_str(), 0700);
  std::string link = dir + "-link";
  fs::create_directory_symlink(dir, link);
  EXPECT_THROW(Spool::open(link, 1 << 20), SpoolError) << "a symlink";
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
    try {
      Spool::open(dir, 1 << 20);
      ADD_FAILURE() << "a directory of another user was accepted";
    } catch (const SpoolError& e) {
      EXPECT_NE(std::string(e.what()).find("owned by uid 65534"), std::string::npos) << e.what();
    }
    ASSERT_EQ(::chown(dir.c_str(), 0, 0), 0);
  }
  EXPECT_NO_THROW(Spool::open(dir, 1 << 20));
}

TEST(Spool, AnotherProcessCannotOpenTheSameSpool) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  auto s = Spool::open(dir, 1 << 20);
  EXPECT_THROW(Spool::open(dir, 1 << 20), SpoolError);  // flock is per open file description: same process too
  s.reset();
  EXPECT_NO_THROW(Spool::open(dir, 1 << 20));
}

TEST(Spool, ALowerMaxBytesOnReopenDropsTheOldest) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  {
    auto s = Spool::open(dir, 16 * kFrame);  // one entry per segment
    for (int i = 0; i < 6; ++i) s->append(Signal::Metrics, 2, payload(i));
  }
  auto s = Spool::open(dir, 4 * kFrame);
  EXPECT_EQ(s->stats().dropped_entries, 2u);
  EXPECT_EQ(s->stats().dropped_points, 4u);
  EXPECT_EQ(drain(*s), (std::vector<std::string>{payload(2), payload(3), payload(4), payload(5)}));
}

TEST(Spool, AnEntryInPartsReadsBackAsTheirConcatenationWithOneCrc) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  std::vector<std::string> parts = {"first-", "", "second-", std::string(70000, 'z')};
  {
    auto s = Spool::open(dir, 1 << 20);
    ASSERT_TRUE(s->append(Signal::Traces, 5, parts, Spool::Sync::Later));
    s->sync();
  }
  auto s = Spool::open(dir, 1 << 20);  // read back from disk, CRC checked by open() and again by front()
  auto e = s->front();
  ASSERT_TRUE(e);
  EXPECT_EQ(e->signal, Signal::Traces);
  EXPECT_EQ(e->bytes, "first-second-" + std::string(70000, 'z'));
  EXPECT_EQ(s->stats().corrupt_tails, 0u);
}

TEST(Spool, FrontBatchTakesConsecutiveEntriesOfOneSignalWithinItsBounds) {
  TempDir tmp;
  auto s = Spool::open(tmp.file("spool"), 1 << 20);
  for (int i = 0; i < 4; ++i) s->append(Signal::Metrics, 10, payload(i));
  s->append(Signal::Logs, 1, payload(4));
  s->append(Signal::Metrics, 10, payload(5));
  EXPECT_EQ(s->stats().points, 51u);

  auto batch = s->front_batch(30, 1 << 20);  // three of 10 points fit, the fourth would pass 30
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(batch[2].bytes, payload(2));
  batch = s->front_batch(1000, 2 * 100);  // by bytes: two payloads of 100
  ASSERT_EQ(batch.size(), 2u);
  batch = s->front_batch(1, 1);  // always at least the front, whatever the bounds
  ASSERT_EQ(batch.size(), 1u);

  s->pop_through(s->front_batch(1000, 1 << 20).back().seq);  // the four metrics entries, up to the logs one
  EXPECT_EQ(s->stats().entries, 2u);
  EXPECT_EQ(s->stats().points, 11u);
  batch = s->front_batch(1000, 1 << 20);
  ASSERT_EQ(batch.size(), 1u) << "a batch never mixes signals";
  EXPECT_EQ(batch[0].signal, Signal::Logs);
  s->pop_through(batch[0].seq);
  s->pop_through(batch[0].seq);  // acknowledged already: nothing more is popped
  EXPECT_EQ(drain(*s), std::vector<std::string>{payload(5)});
}

TEST(Spool, AnEntryOfAnUnknownKindIsSkippedAndCountedNotSent) {
  TempDir tmp;
  std::string dir = tmp.file("spool");
  {
    auto s = Spool::open(dir, 1 << 20);
    s->append(Signal::Metrics, 1, payload(0));
  }
  // A frame whose kind this build does not know (a later version's), with a valid CRC, before a good one.
  FrameHeader h;
  h.kind = 9;
  h.points = 3;
  h.seq = 2;
  std::string frame = encode_frame(h, payload(1));
  {
    std::ofstream f(segments(dir)[0], std::ios::app | std::ios::binary);
    f << frame;
  }
  {
    auto s = Spool::open(dir, 1 << 20);
    s->append(Signal::Metrics, 1, payload(2));
    EXPECT_EQ(drain(*s), (std::vector<std::string>{payload(0), payload(2)}));
    EXPECT_EQ(s->stats().corrupt_entries, 1u);
  }
}

}  // namespace
}  // namespace gcm::otlp
