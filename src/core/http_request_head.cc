#include "core/http_request_head.h"

#include <cstring>

#include <fmt/format.h>

#include "core/ascii.h"

namespace gcm {

namespace {

bool is_tchar(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return std::isalnum(u) || (c != '\0' && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr);
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_tchar(c)) return false;
  return true;
}

// A field value may hold visible characters, spaces, tabs and obs-text; never NUL, CR, LF or other controls.
bool valid_field_value(std::string_view s) {
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
  }
  return true;
}

std::string_view trim_ows(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls f(token) for each comma-separated element of a list field, trimmed and lower-cased, empty ones skipped.
template <typename F>
void for_each_list_element(std::string_view value, F f) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    std::string_view e = trim_ows(value.substr(0, comma));
    if (!e.empty()) f(ascii_lower(e));
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
}

HeadError bad(std::string message) { return {400, std::move(message)}; }

std::optional<HeadError> parse_request_line(std::string_view line, HttpRequest& req, RequestFraming& framing) {
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return bad("bad request line (expected METHOD TARGET HTTP/1.1)");
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method)) return bad("bad request method");
  if (target.empty() || !valid_field_value(target) || target.find_first_of(" \t") != std::string_view::npos)
    return bad("bad request target");
  if (version == "HTTP/1.0") {
    framing.http10 = true;
  } else if (version != "HTTP/1.1") {
    if (version.substr(0, 5) == "HTTP/") return HeadError{505, fmt::format("HTTP version '{}' is not served", version)};
    return bad("bad HTTP version in the request line");
  }
  req.method = method;
  size_t q = target.find('?');
  req.path = target.substr(0, q);
  if (q != std::string_view::npos) req.query = target.substr(q + 1);
  return std::nullopt;
}

std::optional<HeadError> add_field(std::string_view line, HttpRequest& req, int& content_lengths) {
  if (line.front() == ' ' || line.front() == '\t') return bad("folded header lines are not accepted");
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return bad("a header line has no ':'");
  std::string_view name = line.substr(0, colon);
  if (!is_token(name)) return bad(fmt::format("bad header name '{}'", name.substr(0, 64)));
  std::string_view value = trim_ows(line.substr(colon + 1));
  if (!valid_field_value(value)) return bad("a header value holds control characters");
  std::string key = ascii_lower(name);
  if (key == "content-length") ++content_lengths;
  if (key == "host" && req.headers.count(key)) return bad("two Host headers");
  auto [it, inserted] = req.headers.emplace(key, value);
  if (!inserted) {
    it->second += ", ";
    it->second += value;
  }
  return std::nullopt;
}

std::optional<HeadError> decide_framing(const HttpRequest& req, int content_lengths, RequestFraming& framing) {
  auto te = req.headers.find("transfer-encoding");
  auto cl = req.headers.find("content-length");
  if (content_lengths > 1) return bad("two Content-Length headers");
  if (te != req.headers.end()) {
    // Both framings at once is how requests are smuggled past a proxy that reads the other one (RFC 9112 6.3).
    if (cl != req.headers.end()) return bad("Content-Length and Transfer-Encoding together");
    if (framing.http10) return bad("Transfer-Encoding in an HTTP/1.0 request");
    int codings = 0;
    bool other = false;
    for_each_list_element(te->second, [&](const std::string& c) {
      ++codings;
      if (c != "chunked") other = true;
    });
    if (other || codings != 1)
      return HeadError{501, fmt::format("Transfer-Encoding '{}' is not served (only chunked)", te->second)};
    framing.chunked = true;
  } else if (cl != req.headers.end()) {
    const std::string& v = cl->second;
    if (v.empty() || v.size() > 19) return bad(fmt::format("bad Content-Length '{}'", v.substr(0, 32)));
    uint64_t n = 0;
    for (char c : v) {
      if (c < '0' || c > '9') return bad(fmt::format("bad Content-Length '{}'", v.substr(0, 32)));
      n = n * 10 + static_cast<uint64_t>(c - '0');  // 19 digits cannot overflow 64 bits
    }
    framing.content_length = n;
  }
  bool close_token = false, keep_alive = false;
  if (auto c = req.headers.find("connection"); c != req.headers.end())
    for_each_list_element(c->second, [&](const std::string& t) {
      close_token |= t == "close";
      keep_alive |= t == "keep-alive";
    });
  framing.close = framing.http10 ? !keep_alive : close_token;
  if (auto e = req.headers.find("expect"); e != req.headers.end())
    framing.expect_continue = ascii_lower(e->second) == "100-continue";
  return std::nullopt;
}

}  // namespace

std::optional<HeadError> parse_request_head(std::string_view head, HttpRequest& req, RequestFraming& framing) {
  size_t end = head.find("\r\n");
  if (auto e = parse_request_line(head.substr(0, end), req, framing)) return e;
  int content_lengths = 0;
  while (end != std::string_view::npos) {
    size_t start = end + 2;
    end = head.find("\r\n", start);
    std::string_view line = head.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (line.empty()) return bad("an empty header line");
    if (line.find('\n') != std::string_view::npos || line.find('\r') != std::string_view::npos)
      return bad("a bare CR or LF in the head");
    if (auto e = add_field(line, req, content_lengths)) return e;
  }
  return decide_framing(req, content_lengths, framing);
}

std::optional<uint64_t> parse_chunk_size(std::string_view line) {
  std::string_view digits = line.substr(0, line.find(';'));
  digits = trim_ows(digits);
  if (digits.empty()) return std::nullopt;
  uint64_t n = 0;
  bool overflow = false;
  for (char c : digits) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return std::nullopt;
    if (n > (UINT64_MAX >> 4)) overflow = true;
    n = (n << 4) | static_cast<uint64_t>(d);
  }
  return overflow ? UINT64_MAX : n;
}

}  // namespace gcm
