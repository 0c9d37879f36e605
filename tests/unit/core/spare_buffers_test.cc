// The listener's spare body buffers: bounded by the bytes they hold, a taken buffer has the room asked for and no
// more of its old bytes than that.
#include "core/spare_buffers.h"

#include <gtest/gtest.h>

namespace gcm {
namespace {

std::string buffer_of(size_t capacity, char fill) {
  std::string b;
  b.reserve(capacity);
  b.assign(capacity / 2, fill);
  return b;
}

TEST(SpareBuffers, KeepsWhatFitsItsBoundAndDropsTheRest) {
  SpareBuffers s(10000);
  s.keep(buffer_of(4000, 'a'));
  s.keep(buffer_of(4000, 'b'));
  size_t held = s.bytes();
  EXPECT_EQ(s.count(), 2u);
  s.keep(buffer_of(4000, 'c'));  // past the bound
  EXPECT_EQ(s.count(), 2u);
  EXPECT_EQ(s.bytes(), held);
  s.keep(std::string("short"));  // inline, nothing allocated to give
  EXPECT_EQ(s.count(), 2u);
}

TEST(SpareBuffers, TakesTheMostRecentBufferWithRoomCutToTheSize) {
  SpareBuffers s(1 << 20);
  s.keep(buffer_of(1000, 'a'));
  s.keep(buffer_of(8000, 'b'));
  s.keep(buffer_of(2000, 'c'));
  std::string b = s.take(1500);
  EXPECT_GE(b.capacity(), 1500u);
  EXPECT_EQ(b.size(), 1000u) << "its old bytes, to be written over";
  EXPECT_EQ(b[0], 'c');
  EXPECT_EQ(s.count(), 2u);
  std::string small = s.take(100);
  EXPECT_EQ(small.size(), 100u) << "no more of a larger buffer's bytes than asked for";
  std::string none = s.take(1 << 16);  // nothing kept is large enough
  EXPECT_TRUE(none.empty());
  EXPECT_GE(none.capacity(), size_t{1} << 16);
  EXPECT_EQ(s.count(), 1u);
}

}  // namespace
}  // namespace gcm
