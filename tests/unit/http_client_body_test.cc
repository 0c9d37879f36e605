// HttpClient::post with a body in pieces: the server receives them as one body with its Content-Length, also when
// libcurl must send the request again on a new connection (a kept-alive one the server dropped without answering),
// which means reading the pieces again from the start.
#include "core/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gcm {
namespace {

// An HTTP/1.1 server on loopback that answers each request 200 with keep-alive, except the requests it is told to
// drop: it reads them whole, then closes the connection without a word.
class KeepAliveServer {
 public:
  explicit KeepAliveServer(std::vector<bool> drop) : drop_(std::move(drop)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("cannot listen on loopback");
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~KeepAliveServer() {
    stopping_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1/metrics"; }
  std::vector<std::string> bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  int connections() const { return connections_; }

 private:
  void serve() {
    size_t request = 0;
    while (!stopping_) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      ++connections_;
      std::string in;
      for (bool open = true; open;) {
        size_t head_end;
        while ((head_end = in.find("\r\n\r\n")) == std::string::npos && (open = read_more(c, in))) {
        }
        if (!open) break;
        size_t at = in.find("Content-Length: ");
        size_t length = at < head_end ? std::stoul(in.substr(at + 16)) : 0;
        while (in.size() < head_end + 4 + length && (open = read_more(c, in))) {
        }
        if (!open) break;
        std::string body = in.substr(head_end + 4, length);
        in.erase(0, head_end + 4 + length);
        bool dropped = request < drop_.size() && drop_[request];
        ++request;
        if (dropped) break;  // read whole, never answered
        {
          std::lock_guard lock(mu_);
          bodies_.push_back(body);
        }
        std::string answer = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        if (::send(c, answer.data(), answer.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(answer.size())) break;
      }
      ::close(c);
    }
  }
  static bool read_more(int c, std::string& in) {
    char buf[65536];
    ssize_t n = ::recv(c, buf, sizeof buf, 0);
    if (n <= 0) return false;
    in.append(buf, static_cast<size_t>(n));
    return true;
  }

  std::vector<bool> drop_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::vector<std::string> bodies_;
  std::thread thread_;
};

// Pieces of unequal sizes, one of them empty and one larger than libcurl's upload buffer (64 KiB), so that reads
// start and end inside pieces.
std::vector<std::string> pieces() {
  std::vector<std::string> p;
  p.push_back("first;");
  p.push_back("");
  p.push_back(std::string(200000, 'x') + ";");
  for (int i = 0; i < 50; ++i) p.push_back("piece " + std::to_string(i) + ";");
  return p;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string all;
  for (const auto& p : parts) all += p;
  return all;
}

TEST(HttpClientBody, PiecesArriveAsOneBodyInOrder) {
  KeepAliveServer server({});
  HttpClient http;
  auto parts = pieces();
  HttpResponse res = http.post(server.url(), std::span<const std::string>(parts), {}, std::chrono::seconds(10));
  EXPECT_EQ(res.status, 200);
  res = http.post(server.url(), std::string("one piece"), {}, std::chrono::seconds(10));
  EXPECT_EQ(res.status, 200);
  std::vector<std::string> empty;
  res = http.post(server.url(), std::span<const std::string>(empty), {}, std::chrono::seconds(10));
  EXPECT_EQ(res.status, 200);
  auto got = server.bodies();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], joined(parts));
  EXPECT_EQ(got[1], "one piece");
  EXPECT_EQ(got[2], "");
  EXPECT_EQ(server.connections(), 1) << "one kept-alive connection";
}

// The second request goes out on the kept-alive connection, which the server then drops unanswered: libcurl sends
// it again on a new connection, reading the body again from its start (the seek callback), and it arrives whole.
TEST(HttpClientBody, ARequestSentAgainOnANewConnectionIsReadAgainFromItsStart) {
  KeepAliveServer server({false, true});
  HttpClient http;
  auto parts = pieces();
  ASSERT_EQ(http.post(server.url(), std::string("warm"), {}, std::chrono::seconds(10)).status, 200);
  HttpResponse res = http.post(server.url(), std::span<const std::string>(parts), {}, std::chrono::seconds(10));
  EXPECT_EQ(res.status, 200);
  auto got = server.bodies();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1], joined(parts));
  EXPECT_EQ(server.connections(), 2);
}

}  // namespace
}  // namespace gcm
