// The one HTTP/1.1 server of the project: the collectors' Prometheus /metrics endpoint, slurm_processor's
// OTLP/HTTP receiver and the agent's job-signal endpoint (on a unix socket too) all serve through it. Each request
// says who is at the other end (HttpPeer: SO_PEERCRED on a unix socket, the two addresses on TCP).
//
// It assumes the peer is hostile. One I/O thread (epoll) owns every socket, so a connection that trickles bytes costs
// a buffer, never a thread; complete requests are handed to a small pool of handler threads. Every request has a
// deadline of its own for its head and for the whole request (a byte every few seconds does not extend it), idle
// keep-alive connections have a deadline too, the number of connections is bounded (at the limit the oldest idle
// connection, then the oldest one still sending its head, is closed to make room), and so is the memory: the head,
// each body (413 before it is read), and the sum of the bodies being received or handled (503 with Retry-After).
// Framing follows RFC 9112: Content-Length and chunked bodies (sizes checked without overflow), a request with both
// or with two Content-Lengths is refused (400) and the connection closed, as is any malformed head.
//
// TLS (OpenSSL, loaded at run time: core/tls.h) runs inside the same event loop: the handshake is a phase of the
// connection bounded by the head deadline, and OpenSSL's "want read"/"want write" become the socket's epoll interest.
// Authentication (core/http_auth.h) is checked before the handler: a cached or bearer credential on the I/O thread,
// a bcrypt verification on a handler thread.
//
// Written here rather than taken from cpp-httplib: the Debian build of cpp-httplib is a shared library linked with
// OpenSSL and Brotli whose loading costs about 11 ms at every start of every gcm command (measured with perf stat),
// and cpp-httplib's thread-per-connection model is what let a few slow sockets lock every client out.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace gcm {

class HttpAuth;
class TlsServerContext;
struct WebConfig;

// Who is at the other end of a request's connection, as the kernel says at accept(): for a unix socket the
// SO_PEERCRED of the process that connected, for TCP the two addresses (the socket table names the owner).
struct HttpPeer {
  bool unix_socket = false;
  int64_t pid = -1, uid = -1, gid = -1;  // unix socket only
  std::string address;                   // TCP: the peer's numeric address
  int port = 0;                          // TCP: the peer's port
  std::string local_address;             // TCP: the address the peer connected to
  int local_port = 0;
};

struct HttpRequest {
  std::string method;
  std::string path;                            // without the query
  std::string query;                           // after '?', without it
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  bool too_large = false;  // the body exceeds max_body and was not read: the handler answers 413
  HttpPeer peer;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::string extra_headers;  // "Name: value\r\n" lines
};

struct HttpListenerOptions {
  std::string host = "127.0.0.1";     // "" or "0.0.0.0": every IPv4 address
  int port = 0;                       // 0: any free port
  // Not empty: listen on this unix socket instead of host:port (a stale socket file there is replaced; any other
  // file is an error), with this mode (0666: any local user may connect, what it may do is decided by its
  // credentials in HttpRequest::peer).
  std::string unix_path;
  unsigned unix_mode = 0666;
  size_t max_head = 64 * 1024;        // request line and headers (431 past it)
  size_t max_body = 16u << 20;        // one body, as received (413 past it)
  size_t max_in_flight = 128u << 20;  // the bodies of every connection together (503 with Retry-After past it)
  int max_connections = 1024;
  std::chrono::milliseconds head_timeout{10000};     // from a request's first byte to the end of its head
  std::chrono::milliseconds request_timeout{60000};  // from a request's first byte to the end of its body
  std::chrono::milliseconds idle_timeout{60000};     // a kept-alive connection waiting for its next request
  std::chrono::milliseconds write_timeout{30000};    // a reply that the client does not read
  int workers = 2;                                   // threads running the handler; 0: on the I/O thread
  // GET and HEAD requests are answered on the I/O thread, so /health and /metrics answer while every worker is
  // busy with large bodies. Their handlers must not block.
  bool inline_get = true;
  std::shared_ptr<const TlsServerContext> tls;  // null: plain HTTP
  std::shared_ptr<HttpAuth> auth;               // null: no authentication; with it, workers is at least 1
  std::string extra_headers;                    // "Name: value\r\n" lines added to every answer
};

// Sets tls, auth and extra_headers from a web config (core/web_config.h), plus a bearer token ("" for none). Throws
// TlsError naming the file when its certificate or key cannot be used, std::runtime_error when OpenSSL or libcrypt
// cannot be loaded.
void apply_web_config(HttpListenerOptions& opts, const WebConfig& cfg, const std::string& bearer_token = "");

struct HttpListenerStats {
  uint64_t accepted = 0;
  uint64_t requests = 0;
  uint64_t open = 0;             // connections now
  uint64_t evicted = 0;          // closed to make room at the connection limit
  uint64_t refused = 0;          // closed at once: the limit was reached and nothing could be evicted
  uint64_t timed_out = 0;        // closed at a head, request, idle or write deadline
  uint64_t bad_requests = 0;     // malformed framing: answered 400/431/501 and closed
  uint64_t over_budget = 0;      // answered 503 because the bodies in flight reached max_in_flight
  uint64_t in_flight_bytes = 0;  // bodies being received or handled, now
  uint64_t tls_failed = 0;       // TLS handshakes that failed (no or a bad client certificate, not TLS, ...)
  uint64_t unauthorized = 0;     // requests answered 401
};

class HttpListener {
 public:
  using Handler = std::function<HttpReply(const HttpRequest&)>;
  // Binds at once; throws std::runtime_error naming the address when it cannot.
  HttpListener(HttpListenerOptions opts, Handler handler);
  ~HttpListener();
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  int port() const;  // 0 for a unix socket
  void start();
  // Stops accepting, closes every connection (requests being handled finish first) and joins the threads.
  void stop();
  HttpListenerStats stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// "HOST:PORT", "[V6]:PORT" or ":PORT" (every address) into host and port; throws std::invalid_argument naming
// `what` and the value when the port is not a number from 0 to 65535.
std::pair<std::string, int> parse_listen_address(const std::string& value, const std::string& what);

}  // namespace gcm
