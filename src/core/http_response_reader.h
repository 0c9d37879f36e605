// An HTTP/1.1 response read from the bytes of a connection as they arrive (RFC 9112): the status line, the header
// fields and the body framed by Content-Length, by chunked transfer coding or by the end of the connection; interim
// 1xx answers are skipped. Bounded: the head, each chunk-size line, the trailers and the body have limits, so a
// hostile or broken server costs at most those bytes. Separate from the client's socket code (core/http_client.cc)
// so that unit tests and a fuzz target can feed it any bytes, split anywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/http_chunked_body.h"
#include "core/http_client.h"

namespace gcm {

class HttpResponseReader {
 public:
  static constexpr size_t kMaxHead = 64 * 1024;  // status line and header fields (and the trailers)

  // max_body: a body larger than this is an error (0: no limit).
  explicit HttpResponseReader(size_t max_body = 0) : max_body_(max_body) {}

  // Takes the next bytes of the connection. True once the response is complete; the bytes after it, if any, are
  // not taken (the server sent more than one answer: the connection is not kept). Throws HttpTransportError saying
  // what was wrong with the answer (a malformed head, an unreadable chunk size, a body over the limit).
  bool feed(std::string_view bytes);
  // The server closed the connection: a body that runs to the end of the connection is complete; anything else
  // unfinished is an error (thrown, naming what was missing).
  void end_of_stream();

  bool done() const { return state_ == State::Done; }
  bool started() const { return started_; }  // a byte of the answer has arrived
  // Whether the connection can carry the next request: HTTP/1.1 without "Connection: close" (HTTP/1.0 only with
  // "Connection: keep-alive"), a body that did not run to the end of the connection, and nothing after the answer.
  bool keep_alive() const { return keep_alive_ && !extra_bytes_; }
  HttpResponse& response() { return response_; }

 private:
  enum class State { Head, Body, UntilClose, Chunked, Done };

  bool parse_head(std::string_view head);  // false: an interim (1xx) answer, read the next head
  void add_body(std::string_view bytes);
  bool take_counted(std::string_view& bytes);  // up to left_ bytes into the body; true when left_ is reached

  size_t max_body_;
  State state_ = State::Head;
  std::string pending_;  // a head not yet complete, or the chunked body's bytes the decoder has not taken
  uint64_t left_ = 0;    // Content-Length bytes still to come
  ChunkedBodyDecoder chunked_{kMaxHead};  // the listener's decoder: one reading of chunked framing
  bool started_ = false;
  bool keep_alive_ = true;
  bool extra_bytes_ = false;
  HttpResponse response_;
};

}  // namespace gcm
