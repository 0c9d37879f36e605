// The listener's chunked-body decoder on its own: bytes in any split, each framing error with its status, the
// caller's bound asked before a chunk is taken, trailers bounded.
#include "core/http_chunked_body.h"

#include <gtest/gtest.h>

namespace gcm {
namespace {

using Kind = ChunkedBodyDecoder::Result::Kind;

ChunkedBodyDecoder::ChunkVerdict take(uint64_t) { return ChunkedBodyDecoder::ChunkVerdict::Take; }

TEST(ChunkedBodyDecoder, DecodesABodyFedOneByteAtATime) {
  std::string wire = "4\r\nWiki\r\n5;ext=1\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nX-Trailer: 1\r\n\r\n";
  ChunkedBodyDecoder d(1024);
  std::string in, body;
  ChunkedBodyDecoder::Result r;
  for (size_t i = 0; i < wire.size(); ++i) {
    in.push_back(wire[i]);
    r = d.feed(in, body, take);
    if (i + 1 < wire.size()) {
      ASSERT_EQ(r.kind, Kind::NeedMore) << "at byte " << i;
    }
  }
  EXPECT_EQ(r.kind, Kind::Complete);
  EXPECT_EQ(body, "Wikipedia in\r\n\r\nchunks.");
  EXPECT_TRUE(in.empty());
}

TEST(ChunkedBodyDecoder, LeavesTheNextRequestsBytesInTheInput) {
  std::string in = "3\r\nabc\r\n0\r\n\r\nGET / HTTP/1.1\r\n", body;
  ChunkedBodyDecoder d(1024);
  EXPECT_EQ(d.feed(in, body, take).kind, Kind::Complete);
  EXPECT_EQ(body, "abc");
  EXPECT_EQ(in, "GET / HTTP/1.1\r\n");
}

TEST(ChunkedBodyDecoder, EachFramingErrorHasItsStatus) {
  struct Case {
    std::string wire;
    int status;
    std::string message;
  };
  for (const Case& c : {Case{"zz\r\n", 400, "unreadable chunk size 'zz'"},
                        Case{"3\r\nabcX\r\n", 400, "a chunk is longer than its size (no CRLF after its bytes)"},
                        Case{std::string(5000, '1'), 400, "a chunk-size line is longer than 4096 bytes"},
                        Case{"0\r\n" + std::string(40, 'T') + "\r\n", 431, "the trailer fields are too large"},
                        Case{"0\r\n" + std::string(40, 'T'), 431, "the trailer fields are too large"}}) {
    ChunkedBodyDecoder d(32);
    std::string in = c.wire, body;
    auto r = d.feed(in, body, take);
    EXPECT_EQ(r.kind, Kind::Bad) << c.wire.substr(0, 20);
    EXPECT_EQ(r.status, c.status) << c.wire.substr(0, 20);
    EXPECT_EQ(r.message, c.message);
  }
}

TEST(ChunkedBodyDecoder, AsksTheCallerBeforeTakingEachChunk) {
  std::vector<uint64_t> asked;
  auto bound = [&](uint64_t size) {
    asked.push_back(size);
    if (size > 100) return ChunkedBodyDecoder::ChunkVerdict::TooLarge;
    if (size > 10) return ChunkedBodyDecoder::ChunkVerdict::OverBudget;
    return ChunkedBodyDecoder::ChunkVerdict::Take;
  };
  {
    ChunkedBodyDecoder d(1024);
    std::string in = "2\r\nab\r\nffffffffffffffff\r\n", body;
    EXPECT_EQ(d.feed(in, body, bound).kind, Kind::TooLarge);
    EXPECT_EQ(asked, (std::vector<uint64_t>{2, 0xffffffffffffffffull}));
    EXPECT_EQ(body, "ab") << "nothing of the refused chunk is taken";
  }
  ChunkedBodyDecoder d(1024);
  std::string in = "b\r\nhello world\r\n", body;
  EXPECT_EQ(d.feed(in, body, bound).kind, Kind::OverBudget);
  EXPECT_TRUE(body.empty());
}

TEST(ChunkedBodyDecoder, ResetStartsTheNextBody) {
  ChunkedBodyDecoder d(1024);
  std::string in = "1\r\na", body;
  EXPECT_EQ(d.feed(in, body, take).kind, Kind::NeedMore);
  d.reset(1024);
  body.clear();
  in = "1\r\nb\r\n0\r\n\r\n";
  EXPECT_EQ(d.feed(in, body, take).kind, Kind::Complete);
  EXPECT_EQ(body, "b");
}

}  // namespace
}  // namespace gcm
