#include "core/tiny_http_server.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/http_client.h"

namespace gcm {
namespace {

using namespace std::chrono_literals;


// A raw request over a socket, to exercise methods and malformed input the HTTP client never sends.
std::string raw(int port, const std::string& request) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return "connect failed";
  (void)!write(s, request.data(), request.size());
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(s, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(s);
  return out;
}

TEST(TinyHttpServer, ServesGetWithLengthAndContentType) {
  TinyHttpServer server("127.0.0.1", 0, [](std::string_view, std::string_view path) {
    return path == "/metrics" ? HttpAnswer{200, "text/plain; version=0.0.4", "up 1\n"}
                              : HttpAnswer{404, "text/plain", "nope\n"};
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

TEST(TinyHttpServer, MethodsAndMalformedRequests) {
  TinyHttpServer server("127.0.0.1", 0, [](std::string_view, std::string_view) {
    return HttpAnswer{200, "text/plain", "body"};
  });
  server.start();
  EXPECT_EQ(raw(server.port(), "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
  std::string head = raw(server.port(), "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_NE(head.find("Content-Length: 4"), std::string::npos);
  EXPECT_EQ(head.find("body"), std::string::npos);
  EXPECT_EQ(raw(server.port(), "garbage\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  // A client that connects and sends nothing is dropped after the read timeout; the next one is served.
  EXPECT_EQ(raw(server.port(), "GET / HTTP/1.0\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
}

TEST(TinyHttpServer, BusyPortIsAnErrorNamingTheAddress) {
  TinyHttpServer first("127.0.0.1", 0, [](std::string_view, std::string_view) { return HttpAnswer{}; });
  try {
    TinyHttpServer second("127.0.0.1", first.port(), [](std::string_view, std::string_view) { return HttpAnswer{}; });
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(first.port())), std::string::npos);
  }
}

}  // namespace
}  // namespace gcm
