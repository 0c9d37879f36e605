// HttpResponseReader: every framing of an answer, fed whole and one byte at a time (a connection may split it
// anywhere), and the answers it refuses, each with an error that says what was wrong.
#include "core/http_response_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace gcm {
namespace {

// Feeds `bytes` whole or one byte at a time; ends the stream when `close` (the server closed the connection).
HttpResponse read(const std::string& bytes, bool one_at_a_time, bool close = false, bool* keep_alive = nullptr,
                  size_t max_body = 0) {
  HttpResponseReader reader(max_body);
  bool done = false;
  if (one_at_a_time) {
    for (size_t i = 0; i < bytes.size() && !done; ++i) done = reader.feed(std::string_view(bytes).substr(i, 1));
  } else {
    done = reader.feed(bytes);
  }
  if (close) reader.end_of_stream();
  EXPECT_TRUE(reader.done());
  if (keep_alive) *keep_alive = reader.keep_alive();
  return reader.response();
}

std::string error_of(const std::string& bytes, bool close = false, size_t max_body = 0) {
  HttpResponseReader reader(max_body);
  try {
    reader.feed(bytes);
    if (close) reader.end_of_stream();
  } catch (const HttpTransportError& e) {
    return e.what();
  }
  return "no error";
}

TEST(HttpResponseReader, ContentLengthBodyWholeOrByteByByte) {
  std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world";
  for (bool split : {false, true}) {
    bool keep = false;
    HttpResponse res = read(answer, split, false, &keep);
    EXPECT_EQ(res.status, 200);
    EXPECT_EQ(res.body, "hello world");
    EXPECT_EQ(res.header("content-type"), "text/plain");
    EXPECT_TRUE(keep);
  }
}

TEST(HttpResponseReader, ChunkedBodyWithExtensionsAndTrailers) {
  std::string answer =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\n"
      "4;name=value\r\nwiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\nExpires: never\r\n\r\n";
  for (bool split : {false, true}) {
    bool keep = false;
    HttpResponse res = read(answer, split, false, &keep);
    EXPECT_EQ(res.body, "wikipedia in\r\n\r\nchunks.");
    EXPECT_TRUE(keep);
  }
  EXPECT_EQ(read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", true).body, "");
}

TEST(HttpResponseReader, InterimAnswersAreSkipped) {
  std::string answer =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\n"
      "HTTP/1.1 400 Bad Request\r\nContent-Length: 3\r\n\r\nbad";
  for (bool split : {false, true}) {
    HttpResponse res = read(answer, split);
    EXPECT_EQ(res.status, 400);
    EXPECT_EQ(res.body, "bad");
    EXPECT_EQ(res.header("link"), "");
  }
}

TEST(HttpResponseReader, ABodyToTheEndOfTheConnection) {
  HttpResponseReader reader;
  EXPECT_FALSE(reader.feed("HTTP/1.1 200 OK\r\nServer: x\r\n\r\nsome"));
  EXPECT_FALSE(reader.feed(" more"));
  reader.end_of_stream();
  EXPECT_TRUE(reader.done());
  EXPECT_EQ(reader.response().body, "some more");
  EXPECT_FALSE(reader.keep_alive());
  // A coding other than chunked last: to the end of the connection too.
  bool keep = true;
  EXPECT_EQ(read("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzz", false, true, &keep).body, "zz");
  EXPECT_FALSE(keep);
}

TEST(HttpResponseReader, AnswersWithoutABodyAndWhatKeepsTheConnection) {
  bool keep = false;
  EXPECT_EQ(read("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", false, false, &keep).body, "");
  EXPECT_TRUE(keep);
  read("HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n", false, false, &keep);
  EXPECT_FALSE(keep);
  read("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", false, false, &keep);
  EXPECT_FALSE(keep);
  read("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n", false, false, &keep);
  EXPECT_TRUE(keep);
  // Bytes after the answer, which no request asked for: the connection is not used again.
  HttpResponseReader reader;
  EXPECT_TRUE(reader.feed("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\n"));
  EXPECT_EQ(reader.response().body, "x");
  EXPECT_FALSE(reader.keep_alive());
}

TEST(HttpResponseReader, MalformedAnswersSayWhatIsWrong) {
  EXPECT_EQ(error_of("SSH-2.0-OpenSSH_9.2\r\n\r\n"), "the answer is not HTTP/1.x: 'SSH-2.0-OpenSSH_9.2'");
  EXPECT_EQ(error_of("HTTP/1.1 2000 OK\r\n\r\n"), "the answer is not HTTP/1.x: 'HTTP/1.1 2000 OK'");
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nno colon\r\n\r\n"), "the answer has a malformed header line: 'no colon'");
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\n folded: x\r\n\r\n"), "the answer has a malformed header line: ' folded: x'");
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n"),
            "the answer's Content-Length is not a number: '-1'");
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            "the answer's chunked body: unreadable chunk size 'zz'");
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n"),
            "the answer's chunked body: a chunk is longer than its size (no CRLF after its bytes)");
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(5000, '0')),
            "the answer's chunked body: a chunk-size line is longer than 4096 bytes");
  EXPECT_EQ(error_of("HTTP/1.1 101 Switching Protocols\r\n\r\n"),
            "the server switched protocols (HTTP 101), which was not asked for");
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nX: " + std::string(70000, 'x')),
            "the answer's head is larger than 65536 bytes");
}

TEST(HttpResponseReader, AnAnswerCutShortIsAnError) {
  EXPECT_EQ(error_of("", true), "the server closed the connection without an answer");
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nContent-", true),
            "the server closed the connection in the middle of its head");
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", true),
            "the server closed the connection 3 bytes into the body of its answer");
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", true),
            "the server closed the connection 2 bytes into the body of its answer");
}

TEST(HttpResponseReader, ABodyOverTheLimitIsRefusedBeforeItIsRead) {
  const std::string limit = "the response is larger than 8 bytes";
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", false, 8), limit);
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n12345\r\n4\r\n", false, 8), limit);
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n", false, 8), limit);
  EXPECT_EQ(error_of("HTTP/1.1 200 OK\r\n\r\n123456789", false, 8), limit);
  EXPECT_EQ(read("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n12345678", false, false, nullptr, 8).body, "12345678");
}

}  // namespace
}  // namespace gcm
