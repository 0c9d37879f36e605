// HttpListener on a unix socket: the peer's credentials reach the handler, a stale socket file is replaced, any
// other file at the path is an error naming it, and the socket file goes with the listener. TCP requests carry both
// addresses.
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "core/http_listener.h"
#include "temp_dir.h"

namespace gcm {
namespace {

std::string get(int fd) {
  std::string req = "GET /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", answer;
  ::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[1024];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) answer.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return answer;
}

int connect_unix(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  return ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 ? fd : -1;
}

TEST(HttpListenerUnix, ThePeersCredentialsReachTheHandler) {
  gcm::testing::TempDir d;
  HttpListenerOptions o;
  o.unix_path = d.file("s.sock");
  std::mutex mu;
  HttpPeer seen;
  HttpListener l(o, [&](const HttpRequest& r) {
    std::lock_guard<std::mutex> g(mu);
    seen = r.peer;
    return HttpReply{};
  });
  l.start();
  struct stat st {};
  ASSERT_EQ(::stat(o.unix_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  EXPECT_EQ(l.port(), 0);
  int fd = connect_unix(o.unix_path);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(get(fd).rfind("HTTP/1.1 200", 0), 0u);
  std::lock_guard<std::mutex> g(mu);
  EXPECT_TRUE(seen.unix_socket);
  EXPECT_EQ(seen.pid, ::getpid());
  EXPECT_EQ(seen.uid, static_cast<int64_t>(::getuid()));
  l.stop();
}

TEST(HttpListenerUnix, AStaleSocketIsReplacedAndAnyOtherFileIsAnError) {
  gcm::testing::TempDir d;
  HttpListenerOptions o;
  o.unix_path = d.file("s.sock");
  {
    HttpListener first(o, [](const HttpRequest&) { return HttpReply{}; });
  }
  EXPECT_FALSE(std::filesystem::exists(o.unix_path)) << "the socket file goes with the listener";
  // A socket file left behind by a crash: bound by hand, never removed.
  int stale = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", o.unix_path.c_str());
  ASSERT_EQ(::bind(stale, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::close(stale);
  HttpListener second(o, [](const HttpRequest&) { return HttpReply{}; });
  second.start();
  int fd = connect_unix(o.unix_path);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(get(fd).rfind("HTTP/1.1 200", 0), 0u);
  second.stop();

  HttpListenerOptions f;
  f.unix_path = d.file("plain");
  std::ofstream(f.unix_path) << "mine";
  try {
    HttpListener l(f, [](const HttpRequest&) { return HttpReply{}; });
    FAIL() << "a plain file was replaced";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(f.unix_path + ": a file that is not a socket is there"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(std::filesystem::exists(f.unix_path));
}

TEST(HttpListenerUnix, TcpRequestsCarryBothAddresses) {
  std::mutex mu;
  HttpPeer seen;
  HttpListener l(HttpListenerOptions{}, [&](const HttpRequest& r) {
    std::lock_guard<std::mutex> g(mu);
    seen = r.peer;
    return HttpReply{};
  });
  l.start();
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(l.port()));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  sockaddr_in mine{};
  socklen_t len = sizeof mine;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &len);
  EXPECT_EQ(get(fd).rfind("HTTP/1.1 200", 0), 0u);
  std::lock_guard<std::mutex> g(mu);
  EXPECT_FALSE(seen.unix_socket);
  EXPECT_EQ(seen.address, "127.0.0.1");
  EXPECT_EQ(seen.port, ntohs(mine.sin_port));
  EXPECT_EQ(seen.local_address, "127.0.0.1");
  EXPECT_EQ(seen.local_port, l.port());
  l.stop();
}

}  // namespace
}  // namespace gcm
