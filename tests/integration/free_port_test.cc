// free_port(): ports outside the kernel's ephemeral range (which a sender's connects can take as source ports),
// never handed out twice in one process, and really free.
#include <set>

#include <gtest/gtest.h>

#include "helpers.h"

namespace gcm::testing {
namespace {

TEST(FreePort, OutsideTheEphemeralRangeAndNeverTheSameTwice) {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  int ephemeral_low = 0, ephemeral_high = 0;
  ASSERT_TRUE(in >> ephemeral_low >> ephemeral_high);
  std::set<int> seen;
  for (int i = 0; i < 300; ++i) {
    int port = free_port();
    EXPECT_TRUE(port < ephemeral_low || port > ephemeral_high) << port;
    EXPECT_GE(port, 1024);
    EXPECT_TRUE(seen.insert(port).second) << "port " << port << " handed out twice";
  }
}

TEST(FreePort, SkipsAPortSomeoneHolds) {
  auto [first, last] = test_port_range();
  // Hold the next port of this process' sequence.
  int probe = free_port();
  int held_fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int held = probe + 1 > last ? first : probe + 1;  // the next port in sequence
  a.sin_port = htons(static_cast<uint16_t>(held));
  // Held by this test, or (rarely) already by another process: either way free_port() must pass it by.
  if (::bind(held_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
    ASSERT_EQ(::listen(held_fd, 1), 0);
  }
  int next = free_port();
  ::close(held_fd);
  EXPECT_NE(next, held);
  EXPECT_GE(next, first);
  EXPECT_LE(next, last);
}

}  // namespace
}  // namespace gcm::testing
