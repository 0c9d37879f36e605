// The head of an HTTP/1.1 request (request line and header fields) parsed strictly, as RFC 9112 asks of a server
// that faces untrusted clients: anything that two parsers could read two ways (a request with both Content-Length
// and Transfer-Encoding, two Content-Lengths, whitespace before a colon, folded lines, control bytes) is refused, so
// no request can be smuggled past it. Separate from the listener so that a fuzz target can drive it alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/http_listener.h"

namespace gcm {

struct RequestFraming {
  bool http10 = false;
  bool close = false;            // the connection ends after the answer
  bool chunked = false;          // Transfer-Encoding: chunked
  uint64_t content_length = 0;   // when !chunked
  bool expect_continue = false;  // Expect: 100-continue
};

struct HeadError {
  int status = 400;  // 400, 501 (a transfer coding other than chunked) or 505 (an HTTP version other than 1.x)
  std::string message;
};

// `head` is everything before the blank line that ends it (without that CRLF CRLF). Fills `req` (method, path,
// query, headers with lower-case names; repeated fields joined with ", ") and `framing`; nullopt when it is valid.
std::optional<HeadError> parse_request_head(std::string_view head, HttpRequest& req, RequestFraming& framing);

// The size of one chunk of a chunked body: hexadecimal digits, optionally followed by ";extensions". nullopt when it
// is not one; SIZE_MAX when it does not fit in 64 bits (larger than any limit, so it is refused as too large).
std::optional<uint64_t> parse_chunk_size(std::string_view line);

}  // namespace gcm
