#include <gtest/gtest.h>

#include "collectors/loop.h"
#include "core/json.h"

namespace gcm {
namespace {

// Records what a sink sees: chunks of compact JSON lists.
class RecordingSink : public Sink {
 public:
  void begin_chunk(const BatchInfo&) override { chunks.emplace_back(); }
  void write(const Record& r) override { chunks.back().push_back(to_json(r)); }
  std::vector<std::vector<std::string>> chunks;
};

Schema one_field() {
  Schema s;
  s.name = "C";
  s.fields = {{"v"}};
  return s;
}

std::string as_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
  return out + "]";
}

TEST(Chunking, EachChunkFitsTheReferenceByteRule) {
  Schema s = one_field();
  RecordingSink sink;
  BatchInfo info;
  info.schema = &s;
  // {"v":"xxxxx"} is 13 bytes; a list of n of them is 2 + 13n + (n-1).
  ChunkWriter w(sink, info, 45);
  Record r(s);
  r[0] = "xxxxx";
  for (int i = 0; i < 7; ++i) w.emit(r);
  w.finish();
  ASSERT_EQ(sink.chunks.size(), 3u);  // 3 per chunk: 2+39+2 = 43 <= 45; 4 would be 57
  for (const auto& c : sink.chunks) EXPECT_LE(as_list(c).size(), 45u);
  EXPECT_EQ(sink.chunks[0].size(), 3u);
  EXPECT_EQ(sink.chunks[2].size(), 1u);
  EXPECT_EQ(w.records(), 7u);
}

TEST(Chunking, ExactFitStaysInOneChunk) {
  Schema s = one_field();
  RecordingSink sink;
  BatchInfo info;
  info.schema = &s;
  ChunkWriter w(sink, info, 43);
  Record r(s);
  r[0] = "xxxxx";
  for (int i = 0; i < 3; ++i) w.emit(r);
  w.finish();
  EXPECT_EQ(sink.chunks.size(), 1u);
}

TEST(Chunking, ZeroMeansOneChunkPerRound) {
  Schema s = one_field();
  RecordingSink sink;
  BatchInfo info;
  info.schema = &s;
  ChunkWriter w(sink, info, 0);
  Record r(s);
  r[0] = std::string(10000, 'y');
  for (int i = 0; i < 100; ++i) w.emit(r);
  w.finish();
  ASSERT_EQ(sink.chunks.size(), 1u);
  EXPECT_EQ(sink.chunks[0].size(), 100u);
}

TEST(Chunking, OversizedRecordIsSentAloneAndCounted) {
  Schema s = one_field();
  RecordingSink sink;
  BatchInfo info;
  info.schema = &s;
  ChunkWriter w(sink, info, 20);
  Record small(s), big(s);
  small[0] = "a";
  big[0] = std::string(100, 'b');
  w.emit(small);
  w.emit(big);
  w.emit(small);
  w.finish();
  ASSERT_EQ(sink.chunks.size(), 3u);
  EXPECT_EQ(sink.chunks[1].size(), 1u);
  EXPECT_EQ(w.oversized(), 1u);
}

TEST(Chunking, NoRecordsNoChunk) {
  Schema s = one_field();
  RecordingSink sink;
  BatchInfo info;
  info.schema = &s;
  ChunkWriter w(sink, info, 100);
  w.finish();
  EXPECT_TRUE(sink.chunks.empty());
}

}  // namespace
}  // namespace gcm
