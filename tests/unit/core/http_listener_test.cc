// The HTTP listener against well-behaved clients (curl), and against the attacks a hostile peer makes: smuggling
// framings, sizes that wrap, slow heads, connection floods, bodies that would exhaust memory, pipelining floods.
#include "core/http_listener.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/http_client.h"
#include "sinks/sink.h"

namespace gcm {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A raw client over a socket, to send what the HTTP client never sends.
class Raw {
 public:
  explicit Raw(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Raw() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return connected_; }
  bool send(const std::string& s) {
    return ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(s.size());
  }
  void end_writes() { ::shutdown(fd_, SHUT_WR); }
  // Everything until the server closes, or until `timeout` passes (then `closed` is false).
  std::string read_all(std::chrono::milliseconds timeout, bool* closed = nullptr) {
    std::string out;
    auto until = Clock::now() + timeout;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      pollfd p{fd_, POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) {
        if (closed) *closed = false;
        return out;
      }
      char buf[65536];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        if (closed) *closed = true;
        return out;
      }
      out.append(buf, static_cast<size_t>(n));
    }
  }
  // One answer (head and Content-Length body), or what came before `timeout`.
  std::string read_answer(std::chrono::milliseconds timeout = 5s) {
    auto until = Clock::now() + timeout;
    for (;;) {
      size_t end = buf_.find("\r\n\r\n");
      if (end != std::string::npos) {
        size_t cl = buf_.find("Content-Length: ");
        size_t len = cl == std::string::npos || cl > end ? 0 : std::stoul(buf_.substr(cl + 16));
        if (buf_.size() >= end + 4 + len) {
          std::string a = buf_.substr(0, end + 4 + len);
          buf_.erase(0, end + 4 + len);
          return a;
        }
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      pollfd p{fd_, POLLIN, 0};
      if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return buf_;
      char b[65536];
      ssize_t n = ::recv(fd_, b, sizeof b, 0);
      if (n <= 0) return buf_;
      buf_.append(b, static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string buf_;
};

// Waits for a condition the I/O thread reaches on its own time (a loaded machine may take a while).
template <typename F>
bool eventually(F f, std::chrono::milliseconds limit = 10s) {
  for (auto until = Clock::now() + limit; Clock::now() < until; std::this_thread::sleep_for(5ms))
    if (f()) return true;
  return f();
}

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

HttpReply echo(const HttpRequest& r) {
  if (r.too_large) return {413, "text/plain", "too large\n", ""};
  return {200, "text/plain", r.method + " " + r.path + " " + std::to_string(r.body.size()) + "\n", ""};
}

HttpListenerOptions local(std::chrono::milliseconds head_timeout = 10s) {
  HttpListenerOptions o;
  o.host = "127.0.0.1";
  o.port = 0;
  o.head_timeout = head_timeout;
  return o;
}

TEST(HttpListener, ServesGetWithLengthAndContentType) {
  HttpListener server(local(), [](const HttpRequest& r) {
    return r.path == "/metrics" ? HttpReply{200, "text/plain; version=0.0.4", "up 1\n", ""}
                                : HttpReply{404, "text/plain", "nope\n", ""};
  });
  server.start();
  ASSERT_GT(server.port(), 0);
  HttpClient http;
  auto res = http.get("http://127.0.0.1:" + std::to_string(server.port()) + "/metrics?x=1", 5s);
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, "up 1\n");
  EXPECT_EQ(res.header("content-type"), "text/plain; version=0.0.4");
  auto missing = http.get("http://127.0.0.1:" + std::to_string(server.port()) + "/other", 5s);
  EXPECT_EQ(missing.status, 404);
}

TEST(HttpListener, HeadHasNoBodyAndMalformedRequestLinesAre400) {
  HttpListener server(local(), [](const HttpRequest&) { return HttpReply{200, "text/plain", "body", ""}; });
  server.start();
  Raw head(server.port());
  head.send("HEAD /metrics HTTP/1.1\r\n\r\n");
  head.end_writes();
  std::string h = head.read_all(5s);
  EXPECT_EQ(h.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_NE(h.find("Content-Length: 4"), std::string::npos);
  EXPECT_EQ(h.find("body"), std::string::npos);
  for (const char* bad : {"garbage\r\n\r\n", "GET /\r\n\r\n", "GET / HTTP/1.1 extra\r\n\r\n", "G@T / HTTP/1.1\r\n\r\n",
                          "GET / HTTP/1.1\r\nno colon\r\n\r\n", "GET / HTTP/1.1\r\nName : v\r\n\r\n",
                          "GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", "GET / HTTP/1.1\r\nA: b\x01\r\n\r\n"}) {
    Raw c(server.port());
    c.send(bad);
    bool closed = false;
    std::string answer = c.read_all(5s, &closed);
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << bad << " -> " << answer;
    EXPECT_TRUE(closed) << bad;
  }
  Raw v2(server.port());
  v2.send("GET / HTTP/2.0\r\n\r\n");
  EXPECT_EQ(v2.read_all(5s).rfind("HTTP/1.1 505", 0), 0u);
  // HTTP/1.0 closes after the answer unless it asks to be kept alive.
  Raw old(server.port());
  old.send("GET / HTTP/1.0\r\n\r\n");
  bool closed = false;
  EXPECT_EQ(old.read_all(5s, &closed).rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_TRUE(closed);
}

TEST(HttpListener, BusyPortIsAnErrorNamingTheAddress) {
  HttpListener first(local(), [](const HttpRequest&) { return HttpReply{}; });
  try {
    HttpListenerOptions o = local();
    o.port = first.port();
    HttpListener second(o, [](const HttpRequest&) { return HttpReply{}; });
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(first.port())), std::string::npos);
  }
}

TEST(HttpListener, ListenAddressesAreCheckedNotWrapped) {
  EXPECT_EQ(parse_listen_address("127.0.0.1:9400", "listen"), (std::pair<std::string, int>{"127.0.0.1", 9400}));
  EXPECT_EQ(parse_listen_address(":9400", "listen"), (std::pair<std::string, int>{"0.0.0.0", 9400}));
  EXPECT_EQ(parse_listen_address("[::1]:0", "listen"), (std::pair<std::string, int>{"::1", 0}));
  for (const char* bad :
       {"127.0.0.1:99999", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1", "127.0.0.1:", "h:80x", "h:0000080000"}) {
    try {
      parse_listen_address(bad, "listen");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(HttpListener, KeepAliveAnswersPipelinedRequestsInOrder) {
  HttpListener server(local(), echo);
  server.start();
  Raw c(server.port());
  c.send("GET /a HTTP/1.1\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nxyz\r\nGET /c HTTP/1.1\r\n\r\n");
  EXPECT_NE(c.read_answer().find("GET /a 0"), std::string::npos);
  EXPECT_NE(c.read_answer().find("POST /b 3"), std::string::npos);
  EXPECT_NE(c.read_answer().find("GET /c 0"), std::string::npos);
}

TEST(HttpListener, AFloodOfPipelinedRequestsIsAnsweredWithoutRecursion) {
  HttpListener server(local(), echo);
  server.start();
  std::string flood;
  for (int i = 0; i < 20000; ++i) flood += "GET / HTTP/1.1\r\n\r\n";
  Raw c(server.port());
  std::thread sender([&] {
    c.send(flood);
    c.end_writes();
  });
  std::string all = c.read_all(30s);
  sender.join();
  EXPECT_EQ(count_of(all, "HTTP/1.1 200"), 20000u);
}

TEST(HttpListener, ChunkedBodiesAndTheirSizesCannotWrap) {
  HttpListenerOptions o = local();
  o.max_body = 1 << 20;
  HttpListener server(o, echo);
  server.start();
  Raw good(server.port());
  good.send(
      "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n");
  EXPECT_NE(good.read_answer().find("POST /x 5"), std::string::npos);
  // One chunk, then a size whose addition to what was received would wrap a 64-bit size check; then one that
  // does not fit in 64 bits at all; then one just over the limit.
  for (const char* size : {"ffffffffffffffff", "fffffffffffffffff0", "fffff"}) {
    Raw c(server.port());
    c.send(std::string("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n") + size + "\r\n" +
           std::string(100000, 'a'));
    bool closed = false;
    std::string answer = c.read_all(5s, &closed);
    EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << size << ": " << answer;
    EXPECT_TRUE(closed) << size;
  }
  EXPECT_EQ(server.stats().in_flight_bytes, 0u);
  for (const char* bad : {"zz\r\n", "\r\n", "4\r\nabcdXY"}) {
    Raw c(server.port());
    c.send(std::string("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n") + bad);
    EXPECT_EQ(c.read_all(5s).rfind("HTTP/1.1 400", 0), 0u) << bad;
  }
  Raw gzip(server.port());
  gzip.send("POST /x HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n");
  EXPECT_EQ(gzip.read_all(5s).rfind("HTTP/1.1 501", 0), 0u);
}

TEST(HttpListener, ContentLengthWithTransferEncodingOrTwiceIsRefusedAndNothingIsSmuggled) {
  std::atomic<int> handled{0};
  HttpListener server(local(), [&](const HttpRequest& r) {
    ++handled;
    return echo(r);
  });
  server.start();
  Raw both(server.port());
  both.send(
      "POST /x HTTP/1.1\r\nContent-Length: 44\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
      "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n");
  bool closed = false;
  std::string answer = both.read_all(5s, &closed);
  EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
  EXPECT_EQ(count_of(answer, "HTTP/1.1 "), 1u) << answer;
  EXPECT_EQ(answer.find("smuggled"), std::string::npos);
  EXPECT_TRUE(closed);
  Raw twice(server.port());
  twice.send("POST /x HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 30\r\n\r\nabcGET /smuggled HTTP/1.1\r\n\r\n");
  answer = twice.read_all(5s, &closed);
  EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
  EXPECT_EQ(count_of(answer, "HTTP/1.1 "), 1u) << answer;
  EXPECT_TRUE(closed);
  for (const char* cl : {"-1", "1e3", "0x10", "99999999999999999999", " "}) {
    Raw c(server.port());
    c.send(std::string("POST /x HTTP/1.1\r\nContent-Length: ") + cl + "\r\n\r\n");
    EXPECT_EQ(c.read_all(5s).rfind("HTTP/1.1 400", 0), 0u) << cl;
  }
  EXPECT_EQ(handled.load(), 0);
}

TEST(HttpListener, ABodyOverTheLimitIsAnsweredWithoutBeingRead) {
  HttpListenerOptions o = local();
  o.max_body = 1000;
  std::atomic<bool> saw_too_large{false};
  HttpListener server(o, [&](const HttpRequest& r) {
    saw_too_large = r.too_large;
    return echo(r);
  });
  server.start();
  Raw c(server.port());
  c.send("POST /x HTTP/1.1\r\nContent-Length: 1001\r\n\r\n" + std::string(1001, 'a'));
  bool closed = false;
  std::string answer = c.read_all(5s, &closed);
  EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer;
  EXPECT_TRUE(saw_too_large.load());
  EXPECT_TRUE(closed);
  Raw head(server.port());
  head.send("GET / HTTP/1.1\r\nX: " + std::string(70000, 'h') + "\r\n\r\n");
  EXPECT_EQ(head.read_all(5s).rfind("HTTP/1.1 431", 0), 0u);
}

TEST(HttpListener, ExpectContinueGets100BeforeTheBody) {
  HttpListener server(local(), echo);
  server.start();
  Raw c(server.port());
  c.send("POST /x HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(c.read_answer(), "HTTP/1.1 100 Continue\r\n\r\n");
  c.send("ok");
  EXPECT_NE(c.read_answer().find("POST /x 2"), std::string::npos);
}

// The slow-head attack: a byte every 100 ms does not extend the head's deadline, and while 50 such sockets trickle,
// other clients are answered at once.
TEST(HttpListener, SlowHeadsAreCutAtTheirDeadlineAndOthersAreServedMeanwhile) {
  HttpListener server(local(800ms), echo);
  server.start();
  std::vector<std::unique_ptr<Raw>> slow;
  const std::string head = "GET / HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
  // Each sends its first byte at once: a connection that has sent nothing is idle, and an idle one is closed at its
  // deadline without a 408 (the trickler thread may start late on a loaded machine).
  for (int i = 0; i < 50; ++i) {
    slow.push_back(std::make_unique<Raw>(server.port()));
    slow.back()->send(head.substr(0, 1));
  }
  std::atomic<bool> done{false};
  std::thread trickler([&] {
    for (size_t i = 1; i < head.size() - 2 && !done; ++i) {
      for (auto& s : slow) s->send(std::string(1, head[i]));
      std::this_thread::sleep_for(100ms);
    }
  });
  HttpClient http;
  auto t0 = Clock::now();
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(http.get("http://127.0.0.1:" + std::to_string(server.port()) + "/", 5s).status, 200);
  EXPECT_LT(Clock::now() - t0, 4s);  // one connection at a time would wait for every slow head: 50 x 0.8 s
  bool closed = false;
  std::string answer = slow[0]->read_all(5s, &closed);
  done = true;
  trickler.join();
  EXPECT_TRUE(closed) << "a slow head was not cut at its deadline";
  EXPECT_EQ(answer.rfind("HTTP/1.1 408", 0), 0u) << answer;
  // slow[0] was accepted first; the others' deadlines end a little later, in a later sweep.
  EXPECT_TRUE(eventually([&] { return server.stats().timed_out >= 50u; })) << server.stats().timed_out;
}

TEST(HttpListener, AtTheConnectionLimitIdleThenSlowConnectionsMakeRoom) {
  HttpListenerOptions o = local();
  o.max_connections = 4;
  HttpListener server(o, echo);
  server.start();
  std::vector<std::unique_ptr<Raw>> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(std::make_unique<Raw>(server.port()));
  ASSERT_TRUE(eventually([&] { return server.stats().open == 4; }));
  HttpClient http;
  std::string url = "http://127.0.0.1:" + std::to_string(server.port()) + "/";
  EXPECT_EQ(http.get(url, 5s).status, 200);
  bool closed = false;
  idle[0]->read_all(2s, &closed);
  EXPECT_TRUE(closed) << "the oldest idle connection was not the one closed";
  // Four connections in the middle of their heads: the oldest goes.
  std::vector<std::unique_ptr<Raw>> heads;
  for (int i = 0; i < 4; ++i) {
    heads.push_back(std::make_unique<Raw>(server.port()));
    heads.back()->send("GET / HTTP/1.1\r\n");
    std::this_thread::sleep_for(50ms);
  }
  HttpClient fresh;
  EXPECT_EQ(fresh.get(url, 5s).status, 200);
  EXPECT_GE(server.stats().evicted, 2u);
}

TEST(HttpListener, BodiesInFlightAreBoundedTogether) {
  HttpListenerOptions o = local();
  o.max_body = 1 << 20;
  o.max_in_flight = 1 << 20;
  HttpListener server(o, echo);
  server.start();
  Raw first(server.port());
  first.send("POST /x HTTP/1.1\r\nContent-Length: 800000\r\n\r\n" + std::string(1000, 'a'));
  EXPECT_TRUE(eventually([&] { return server.stats().in_flight_bytes == 800000u; }));
  Raw second(server.port());
  second.send("POST /x HTTP/1.1\r\nContent-Length: 800000\r\n\r\n");
  std::string answer = second.read_all(5s);
  EXPECT_EQ(answer.rfind("HTTP/1.1 503", 0), 0u) << answer;
  EXPECT_NE(answer.find("Retry-After: "), std::string::npos);
  first.send(std::string(799000, 'b'));
  EXPECT_NE(first.read_answer().find("POST /x 800000"), std::string::npos);
  EXPECT_TRUE(eventually([&] { return server.stats().in_flight_bytes == 0u; }));
  EXPECT_EQ(server.stats().over_budget, 1u);
}

// A handler that holds the POSTs to /slow until released (the others it echoes at once), counting those it holds.
struct HeldHandler {
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  std::atomic<int> entered{0};
  HttpReply operator()(const HttpRequest& r) {
    if (r.method == "POST" && r.path == "/slow") {
      ++entered;
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return released; });
    }
    return echo(r);
  }
  void release() {
    {
      std::lock_guard lock(mu);
      released = true;
    }
    cv.notify_all();
  }
};

// A handler busy on every worker does not delay GET requests, which are answered on the I/O thread.
TEST(HttpListener, GetIsAnsweredWhileEveryWorkerIsBusy) {
  HttpListenerOptions o = local();
  o.workers = 1;
  HeldHandler held;
  HttpListener server(o, std::ref(held));
  server.start();
  Raw post(server.port());
  post.send("POST /slow HTTP/1.1\r\nContent-Length: 1\r\n\r\nx");
  ASSERT_TRUE(eventually([&] { return held.entered.load() == 1; }));
  HttpClient http;
  EXPECT_EQ(http.get("http://127.0.0.1:" + std::to_string(server.port()) + "/health", 2s).status, 200);
  held.release();
  EXPECT_NE(post.read_answer().find("POST /slow 1"), std::string::npos);
}

// Answers finish on several workers at once and the I/O thread is woken once per batch of them (work()): every
// answer of many clients at once still comes back, none left waiting for a wake that another answer took.
TEST(HttpListener, AnswersFinishingTogetherOnManyWorkersAllComeBack) {
  HttpListenerOptions o = local();
  o.workers = 4;
  std::atomic<unsigned> seed{1};
  HttpListener server(o, [&](const HttpRequest& r) {
    unsigned s = seed.fetch_add(7919);
    std::this_thread::sleep_for(std::chrono::microseconds(s % 300));  // answers end in every order
    return echo(r);
  });
  server.start();
  constexpr int kClients = 8, kRequests = 150;
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      Raw c(server.port());
      for (int k = 0; k < kRequests; ++k) {
        std::string body(static_cast<size_t>(1 + (i * kRequests + k) % 97), 'b');
        if (!c.send("POST /n HTTP/1.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body)) return;
        if (c.read_answer(5s).find("POST /n " + std::to_string(body.size()) + "\n") == std::string::npos) return;
        answered.fetch_add(1);
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(answered.load(), kClients * kRequests);
}

// Bodies are received into the buffers of bodies answered before (written over, not cleared): each request still
// gets exactly its own bytes, larger or smaller than the one before, whether its body came with its head, after it,
// or in pieces.
TEST(HttpListener, ABodyInABufferOfOneBeforeIsExactlyItsOwn) {
  HttpListenerOptions o = local();
  o.workers = 2;
  HttpListener server(o, [](const HttpRequest& r) { return HttpReply{200, "application/octet-stream", r.body, ""}; });
  server.start();
  Raw c(server.port());
  int n = 0;
  for (size_t size : {70000u, 5000u, 120000u, 1u, 0u, 65536u, 300000u, 17u, 70000u}) {
    std::string body(size, '\0');
    for (size_t i = 0; i < size; ++i) body[i] = static_cast<char>('a' + (i * 7 + static_cast<size_t>(n)) % 26);
    std::string head = "POST /b HTTP/1.1\r\nContent-Length: " + std::to_string(size) + "\r\n\r\n";
    size_t with_head = n % 3 == 0 ? 0 : n % 3 == 1 ? std::min<size_t>(size, 100) : size;
    ASSERT_TRUE(c.send(head + body.substr(0, with_head)));
    if (with_head < size) {
      std::this_thread::sleep_for(5ms);  // the rest arrives after the head was read
      ASSERT_TRUE(c.send(body.substr(with_head, (size - with_head) / 2)));
      std::this_thread::sleep_for(5ms);
      ASSERT_TRUE(c.send(body.substr(with_head + (size - with_head) / 2)));
    }
    std::string a = c.read_answer(5s);
    size_t end = a.find("\r\n\r\n");
    ASSERT_NE(end, std::string::npos) << "request " << n;
    EXPECT_EQ(a.substr(end + 4), body) << "request " << n << " of " << size << " bytes";
    ++n;
  }
}

// The socket stays watched while its request is handled: a next request and the client's half-close that arrive
// meanwhile are read after the answer, not lost and not spun on; a client that hangs up meanwhile costs nothing.
TEST(HttpListener, WhatArrivesWhileARequestIsHandledIsReadAfterItsAnswer) {
  HttpListenerOptions o = local();
  o.workers = 1;
  HeldHandler held;
  HttpListener server(o, std::ref(held));
  server.start();
  Raw c(server.port());
  c.send("POST /slow HTTP/1.1\r\nContent-Length: 1\r\n\r\nx");
  ASSERT_TRUE(eventually([&] { return held.entered.load() == 1; }));
  auto gone = std::make_unique<Raw>(server.port());
  gone->send("POST /slow HTTP/1.1\r\nContent-Length: 1\r\n\r\ny");
  c.send("POST /next HTTP/1.1\r\nContent-Length: 2\r\n\r\nab");
  c.end_writes();
  std::this_thread::sleep_for(100ms);  // both arrive while the first request is held
  gone.reset();                        // hangs up with its request queued behind the held one
  held.release();
  bool closed = false;
  std::string all = c.read_all(5s, &closed);
  EXPECT_TRUE(closed) << "the half-close was seen after the answers";
  size_t first = all.find("POST /slow 1"), second = all.find("POST /next 2");
  ASSERT_NE(first, std::string::npos) << all;
  ASSERT_NE(second, std::string::npos) << all;
  EXPECT_LT(first, second);
  {
    HttpClient http;
    EXPECT_EQ(http.get("http://127.0.0.1:" + std::to_string(server.port()) + "/health", 2s).status, 200);
  }
  EXPECT_TRUE(eventually([&] { return server.stats().open == 0; })) << "every connection is closed";
}

TEST(HttpListener, AHandlerThatThrowsIsA500) {
  HttpListener server(local(), [](const HttpRequest&) -> HttpReply { throw std::runtime_error("broken"); });
  server.start();
  Raw c(server.port());
  c.send("GET / HTTP/1.1\r\n\r\n");
  std::string answer = c.read_answer();
  EXPECT_EQ(answer.rfind("HTTP/1.1 500", 0), 0u);
  EXPECT_NE(answer.find("broken"), std::string::npos);
}

// The Prometheus sink's endpoint: a listen address that cannot be a port is a usage error, not a random port (its
// GET-only serving is tested on the running program, Prometheus.IdleAndSlowConnectionsDoNotDelayAScrape).
TEST(PrometheusEndpoint, ABadListenPortIsAUsageErrorNotARandomPort) {
  SinkContext ctx;
  auto sink = make_sink("prometheus", {"listen=127.0.0.1:0"}, ctx);
  ASSERT_TRUE(sink);
  EXPECT_THROW(make_sink("prometheus", {"listen=127.0.0.1:99999"}, ctx), SinkUsageError);
}

}  // namespace
}  // namespace gcm
