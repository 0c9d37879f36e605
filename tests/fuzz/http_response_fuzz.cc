// libFuzzer: the HTTP response reader (the client's side of a connection to any server) never crashes on any bytes,
// never keeps a body over its limit, and reads the same answer (or refuses it with the same error) whether the bytes
// come at once or split in two at any point, as a connection may deliver them.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/http_response_reader.h"
#include "fuzz_target.h"

namespace {

constexpr size_t kMaxBody = 256;

// The outcome of reading `parts` in turn and then the end of the connection: the status, body and whether the
// connection is kept, or the error.
std::string outcome(std::string_view first, std::string_view second) {
  gcm::HttpResponseReader reader(kMaxBody);
  try {
    bool done = reader.feed(first);
    if (!done) done = reader.feed(second);
    if (!done) reader.end_of_stream();
  } catch (const gcm::HttpTransportError& e) {
    return std::string("error: ") + e.what();
  }
  if (!reader.done()) std::abort();
  const gcm::HttpResponse& res = reader.response();
  if (res.body.size() > kMaxBody || res.status < 200 || res.status > 999) std::abort();
  return std::to_string(res.status) + " " + res.body + (reader.keep_alive() ? " keep" : " close");
}

int fuzz_one(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  size_t split = in.empty() ? 0 : data[0] % (in.size() + 1);
  // Extra bytes after a complete answer do not change it but keep the connection from being kept; an answer that
  // completes within the first part has not seen the second, so compare only the answer, not whether it is kept.
  std::string whole = outcome(in, {});
  std::string halves = outcome(in.substr(0, split), in.substr(split));
  auto answer = [](const std::string& o) { return o.substr(0, o.rfind(' ')); };
  if (whole.starts_with("error: ") != halves.starts_with("error: ")) std::abort();
  if (whole.starts_with("error: ") ? whole != halves : answer(whole) != answer(halves)) std::abort();
  return 0;
}

const bool kHttpResponseFuzzRegistered = gcm::fuzz::register_target("http_response_fuzz", fuzz_one);

}  // namespace
