// libFuzzer: the HTTP request head and chunk-size parsers never crash on any bytes, and a head they accept has one
// framing only (never both Content-Length and chunked, which is how requests are smuggled).
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/http_request_head.h"
#include "fuzz_target.h"

namespace {

int fuzz_one(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  size_t end = in.find("\r\n\r\n");
  gcm::HttpRequest req;
  gcm::RequestFraming framing;
  auto error = gcm::parse_request_head(in.substr(0, end), req, framing);
  if (!error) {
    if (framing.chunked && req.headers.count("content-length")) std::abort();
    if (framing.chunked && framing.http10) std::abort();
    if (req.method.empty()) std::abort();
  } else if (error->status != 400 && error->status != 501 && error->status != 505) {
    std::abort();
  }
  if (end != std::string_view::npos) {
    std::string_view rest = in.substr(end + 4);
    (void)gcm::parse_chunk_size(rest.substr(0, rest.find("\r\n")));
  }
  return 0;
}

const bool kHttpRequestFuzzRegistered = gcm::fuzz::register_target("http_request_fuzz", fuzz_one);

}  // namespace
