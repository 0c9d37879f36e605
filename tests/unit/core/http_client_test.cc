// HttpClient::post with a body in pieces: the server receives them as one body with its Content-Length, also when
// libcurl must send the request again on a new connection (a kept-alive one the server dropped without answering),
// which means reading the pieces again from the start.
#include "core/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
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

// A listening socket on a free port of 127.0.0.1.
int listen_on_loopback(int* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 8) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("cannot listen on loopback");
  *port = ntohs(a.sin_port);
  return fd;
}

// What the server does with the request of its number: answer these bytes (then close the connection if told to), or,
// with no bytes, read it whole and close the connection without a word; with `silent`, read it and never answer.
struct Answer {
  std::string bytes = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  bool close_after = false;
  bool silent = false;
  bool before_body = false;  // answered as soon as the head is read, and the connection closed with the body unread
};

Answer dropped() { return Answer{"", false, false}; }

// An HTTP/1.1 server on loopback that answers each request 200 with keep-alive, except those it is told otherwise.
class KeepAliveServer {
 public:
  explicit KeepAliveServer(std::vector<bool> drop) {
    for (bool d : drop) answers_.push_back(d ? dropped() : Answer{});
    start();
  }
  explicit KeepAliveServer(std::vector<Answer> answers) : answers_(std::move(answers)) { start(); }
  void start() {
    fd_ = listen_on_loopback(&port_);
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
  std::vector<std::string> heads() {
    std::lock_guard lock(mu_);
    return heads_;
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
        if (request < answers_.size() && answers_[request].before_body) {
          ++request;
          [[maybe_unused]] auto n =
              ::send(c, answers_[request - 1].bytes.data(), answers_[request - 1].bytes.size(), MSG_NOSIGNAL);
          break;
        }
        size_t at = in.find("Content-Length: ");
        size_t length = at < head_end ? std::stoul(in.substr(at + 16)) : 0;
        while (in.size() < head_end + 4 + length && (open = read_more(c, in))) {
        }
        if (!open) break;
        std::string body = in.substr(head_end + 4, length);
        std::string head = in.substr(0, head_end);
        in.erase(0, head_end + 4 + length);
        Answer answer = request < answers_.size() ? answers_[request] : Answer{};
        ++request;
        if (answer.silent) {
          while (!stopping_ && read_more(c, in)) {
          }
          break;
        }
        if (answer.bytes.empty()) break;  // read whole, never answered
        {
          std::lock_guard lock(mu_);
          bodies_.push_back(body);
          heads_.push_back(head);
        }
        if (::send(c, answer.bytes.data(), answer.bytes.size(), MSG_NOSIGNAL) !=
            static_cast<ssize_t>(answer.bytes.size()))
          break;
        if (answer.close_after) break;
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

  std::vector<Answer> answers_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::vector<std::string> bodies_;
  std::vector<std::string> heads_;
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
  KeepAliveServer server(std::vector<Answer>{});
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

// The second request goes out on the kept-alive connection, which the server then drops unanswered: it is sent again
// on a new connection, from the start of its first piece, and arrives whole.
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

// A 100 Continue before the answer, a chunked body with an extension and a trailer: the final status, the final
// answer's fields and the body, and the connection is kept for the next request.
TEST(HttpClientBody, AChunkedAnswerAfterAnInterimOneIsReadWhole) {
  Answer chunked{
      "HTTP/1.1 100 Continue\r\nX-Interim: 1\r\n\r\n"
      "HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\nRetry-After: 7\r\n\r\n"
      "6;ext=1\r\nhello \r\n5\r\nworld\r\n0\r\nX-Trailer: t\r\n\r\n"};
  KeepAliveServer server({chunked, Answer{}});
  HttpClient http;
  HttpResponse res = http.post(server.url(), std::string("a"), {}, std::chrono::seconds(10));
  EXPECT_EQ(res.status, 503);
  EXPECT_EQ(res.body, "hello world");
  EXPECT_EQ(res.header("retry-after"), "7");
  EXPECT_EQ(res.header("x-interim"), "") << "the interim answer's fields are not the answer's";
  EXPECT_EQ(http.post(server.url(), std::string("b"), {}, std::chrono::seconds(10)).status, 200);
  EXPECT_EQ(server.connections(), 1);
}

// An answer without a length runs to the end of the connection; one with "Connection: close", or after which the
// server closes the connection on its own, is read whole too. The next request goes on a new connection each time.
TEST(HttpClientBody, AnAnswerThatEndsItsConnectionIsFollowedByANewOne) {
  KeepAliveServer server({Answer{"HTTP/1.1 200 OK\r\n\r\nto the end", true},
                          Answer{"HTTP/1.1 202 Accepted\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", true},
                          Answer{"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nthen", true}, Answer{}});
  HttpClient http;
  HttpResponse res = http.post(server.url(), std::string("1"), {}, std::chrono::seconds(10));
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, "to the end");
  res = http.post(server.url(), std::string("2"), {}, std::chrono::seconds(10));
  EXPECT_EQ(res.status, 202);
  EXPECT_EQ(res.body, "ok");
  res = http.post(server.url(), std::string("3"), {}, std::chrono::seconds(10));
  EXPECT_EQ(res.body, "then");
  // The server closed the third connection after its answer, unasked: the fourth request finds that out before it
  // sends, so it is not one that fails and goes again.
  EXPECT_EQ(http.post(server.url(), std::string("4"), {}, std::chrono::seconds(10)).status, 200);
  EXPECT_EQ(server.bodies(), (std::vector<std::string>{"1", "2", "3", "4"}));
  EXPECT_EQ(server.connections(), 4);
}

TEST(HttpClientBody, AServerThatNeverAnswersTimesOut) {
  KeepAliveServer server({Answer{"", false, true}});
  HttpClient http;
  auto start = std::chrono::steady_clock::now();
  try {
    http.post(server.url(), std::string("x"), {}, std::chrono::milliseconds(300));
    FAIL() << "no error";
  } catch (const HttpTransportError& e) {
    EXPECT_NE(std::string(e.what()).find("timed out after 300 ms"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("POST " + server.url()), std::string::npos) << e.what();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300));
}

TEST(HttpClientBody, AnAnswerOverTheLimitIsAnError) {
  KeepAliveServer server({Answer{"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'x')},
                          Answer{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n"
                                 "8\r\n12345678\r\n0\r\n\r\n"}});
  HttpClient http;
  http.set_max_body_bytes(10);
  for (int i = 0; i < 2; ++i) {
    try {
      http.post(server.url(), std::string("x"), {}, std::chrono::seconds(10));
      FAIL() << "no error for answer " << i;
    } catch (const HttpTransportError& e) {
      EXPECT_NE(std::string(e.what()).find("the response is larger than 10 bytes"), std::string::npos) << e.what();
    }
  }
}

// The request head: the request target with its query, Host with the port as written, the caller's fields ("Name:"
// drops one of ours, as libcurl's list does), credentials of the URL as Basic, and the Content-Length of the pieces.
TEST(HttpClientBody, TheHeadCarriesTheTargetHostFieldsAndLength) {
  KeepAliveServer server(std::vector<Answer>{});
  HttpClient http;
  std::string url = server.url();
  url.insert(url.find("://") + 3, "us%20er:p%40ss@");
  std::vector<std::string> parts{"ab", "cde"};
  ASSERT_EQ(http.post(url + "?q=1", std::span<const std::string>(parts),
                      {"Content-Type: application/x-protobuf", "Accept:"}, std::chrono::seconds(10))
                .status,
            200);
  auto heads = server.heads();
  ASSERT_EQ(heads.size(), 1u);
  std::string port = server.url().substr(server.url().rfind(':') + 1);
  port = port.substr(0, port.find('/'));
  EXPECT_EQ(heads[0].substr(0, heads[0].find("\r\n")), "POST /v1/metrics?q=1 HTTP/1.1");
  EXPECT_NE(heads[0].find("\r\nHost: 127.0.0.1:" + port + "\r\n"), std::string::npos) << heads[0];
  EXPECT_NE(heads[0].find("\r\nContent-Type: application/x-protobuf\r\n"), std::string::npos) << heads[0];
  EXPECT_NE(heads[0].find("\r\nContent-Length: 5"), std::string::npos) << heads[0];
  // "us er:p@ss"
  EXPECT_NE(heads[0].find("\r\nAuthorization: Basic dXMgZXI6cEBzcw==\r\n"), std::string::npos) << heads[0];
  EXPECT_EQ(heads[0].find("Accept"), std::string::npos) << heads[0];
  EXPECT_NE(heads[0].find("\r\nUser-Agent: gcm/"), std::string::npos) << heads[0];
}

// A server that refuses a request from its head (413) and closes the connection without reading the body: the
// sending fails, and the answer that came before is the result, not a transport error.
TEST(HttpClientBody, AnAnswerBeforeTheBodyWasReadIsTheResult) {
  Answer early{"HTTP/1.1 413 Content Too Large\r\nConnection: close\r\nContent-Length: 8\r\n\r\ntoo big!"};
  early.before_body = true;
  KeepAliveServer server({early, Answer{}});
  HttpClient http;
  HttpResponse res = http.post(server.url(), std::string(32u << 20, 'x'), {}, std::chrono::seconds(10));
  EXPECT_EQ(res.status, 413);
  EXPECT_EQ(res.body, "too big!");
  EXPECT_EQ(http.post(server.url(), std::string("next"), {}, std::chrono::seconds(10)).status, 200);
}

// A proxy on loopback that takes CONNECT and relays the tunnel both ways (or, told to refuse, answers 403), one
// connection at a time, and notes the request lines it got.
class ConnectProxy {
 public:
  explicit ConnectProxy(bool refuse) : refuse_(refuse) {
    fd_ = listen_on_loopback(&port_);
    thread_ = std::thread([this] { serve(); });
  }
  ~ConnectProxy() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> request_lines() {
    std::lock_guard lock(mu_);
    return lines_;
  }

 private:
  void serve() {
    for (;;) {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string in;
      char buf[4096];
      ssize_t n;
      while (in.find("\r\n\r\n") == std::string::npos && (n = ::recv(c, buf, sizeof buf, 0)) > 0) in.append(buf, n);
      std::string line = in.substr(0, in.find("\r\n"));
      {
        std::lock_guard lock(mu_);
        lines_.push_back(line);
      }
      if (refuse_ || line.rfind("CONNECT 127.0.0.1:", 0) != 0) {
        std::string no = "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n";
        [[maybe_unused]] auto sent = ::send(c, no.data(), no.size(), MSG_NOSIGNAL);
        ::close(c);
        continue;
      }
      int port = std::stoi(line.substr(18));
      int s = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<uint16_t>(port));
      std::string yes = "HTTP/1.1 200 Connection established\r\n\r\n";
      if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
          ::send(c, yes.data(), yes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(yes.size())) {
        pollfd p[2] = {{c, POLLIN, 0}, {s, POLLIN, 0}};
        for (bool open = true; open && ::poll(p, 2, 5000) > 0;) {
          for (int i = 0; i < 2 && open; ++i) {
            if (!p[i].revents) continue;
            n = ::recv(p[i].fd, buf, sizeof buf, 0);
            open = n > 0 && ::send(p[1 - i].fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL) == n;
          }
        }
      }
      ::close(s);
      ::close(c);
    }
  }

  bool refuse_;
  int fd_ = -1;
  int port_ = 0;
  std::mutex mu_;
  std::vector<std::string> lines_;
  std::thread thread_;
};

// The proxy variables as libcurl reads them (http_proxy), set for one test.
class ProxyEnvironment {
 public:
  explicit ProxyEnvironment(const std::string& url) { ::setenv("http_proxy", url.c_str(), 1); }
  ~ProxyEnvironment() { ::unsetenv("http_proxy"); }
};

// Through a proxy, a POST to an http:// URL goes in a CONNECT tunnel (the request written on the connection is the
// server's, in origin form), and the tunnel is kept alive for the next one.
TEST(HttpClientBody, ThroughAProxyAPostGoesInATunnel) {
  KeepAliveServer server(std::vector<Answer>{});
  ConnectProxy proxy(false);
  ProxyEnvironment env(proxy.url());
  HttpClient http;
  auto parts = pieces();
  EXPECT_EQ(http.post(server.url(), std::span<const std::string>(parts), {}, std::chrono::seconds(10)).status, 200);
  EXPECT_EQ(http.post(server.url(), std::string("again"), {}, std::chrono::seconds(10)).status, 200);
  std::string port = server.url().substr(server.url().rfind(':') + 1);
  port = port.substr(0, port.find('/'));
  EXPECT_EQ(proxy.request_lines(), (std::vector<std::string>{"CONNECT 127.0.0.1:" + port + " HTTP/1.1"}));
  EXPECT_EQ(server.bodies(), (std::vector<std::string>{joined(parts), "again"}));
}

TEST(HttpClientBody, AProxyThatRefusesTheTunnelIsNamedInTheError) {
  KeepAliveServer server(std::vector<Answer>{});
  ConnectProxy proxy(true);
  ProxyEnvironment env(proxy.url());
  HttpClient http;
  try {
    http.post(server.url(), std::string("x"), {}, std::chrono::seconds(10));
    FAIL() << "no error";
  } catch (const HttpTransportError& e) {
    EXPECT_NE(std::string(e.what()).find("the proxy answered CONNECT with HTTP 403"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(server.bodies().empty());
}

}  // namespace
}  // namespace gcm
