// A small HTTP client for POSTing telemetry: keeps the connection alive between requests, bounded by a timeout, and
// reports transport failures separately from HTTP answers so callers can decide what to retry. libcurl opens the
// connections (DNS, TCP or a unix socket, TLS, proxies) and performs GETs; a POST is written on its connection from
// the caller's buffers and its answer read by core/http_response_reader.h (see PostConnection in the .cc for why).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace gcm {

struct HttpTransportError : std::runtime_error {  // no HTTP answer: refused, reset, DNS, timeout
  using std::runtime_error::runtime_error;
};

struct HttpResponse {
  long status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

// TLS settings of the client: the CA to verify the server with (PEM; "" for the system's), and a client certificate
// and key for mutual TLS ("" for none). verify = false accepts any server certificate and name (the webhook sink's
// verify_ssl=false, for a test endpoint with a self-signed certificate): the connection is encrypted but the peer
// is not authenticated.
struct HttpClientTls {
  std::string ca_file, cert_file, key_file;
  // The same material in memory (PEM), for credentials that come inline (a kubeconfig's *-data fields): never
  // written to a file. Used where the file of the same kind is "".
  std::string ca_pem, cert_pem, key_pem;
  bool verify = true;
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientTls tls = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  HttpResponse post(const std::string& url, const std::string& body, const std::vector<std::string>& headers,
                    std::chrono::milliseconds timeout);
  // The body in pieces, sent one after the other as one body, each straight from its buffer: a batch of requests
  // goes out without being copied into one buffer, or into libcurl's upload buffer. POSTs keep their connection
  // alive between calls (their own, apart from GETs'), and a request whose kept-alive connection the server had
  // closed is sent once more on a new one.
  HttpResponse post(const std::string& url, std::span<const std::string> body, const std::vector<std::string>& headers,
                    std::chrono::milliseconds timeout);
  HttpResponse get(const std::string& url, std::chrono::milliseconds timeout,
                   const std::vector<std::string>& headers = {});
  // Any other method with a small body (PATCH, PUT, DELETE), on the GETs' connection.
  HttpResponse request(const std::string& method, const std::string& url, const std::string& body,
                       const std::vector<std::string>& headers, std::chrono::milliseconds timeout);

  // Connect through this unix socket instead of the URL's host and port (slurmrestd listening on unix:/path); the
  // URL still gives the path and the Host header. "" for TCP.
  void set_unix_socket(std::string path) { unix_socket_ = std::move(path); }
  // A response body larger than this is refused with an HttpTransportError naming the limit (0: no limit).
  void set_max_body_bytes(size_t bytes) { max_body_bytes_ = bytes; }

 private:
  struct PostConnection;
  HttpResponse perform(const std::string& method, const std::string& url, const std::string* body,
                       const std::vector<std::string>& headers, std::chrono::milliseconds timeout);
  void* curl_;  // GETs' handle (curl_easy_perform)
  std::unique_ptr<PostConnection> post_;
  HttpClientTls tls_;
  std::string unix_socket_;
  size_t max_body_bytes_ = 0;
};

// The answers a sender should retry later: 429 Too Many Requests, 502, 503, 504 (a proxy or the server is busy or
// away). Any other status is the receiver's final word on the request.
inline bool is_retryable_http_status(long status) {
  return status == 429 || status == 502 || status == 503 || status == 504;
}

// Parses a Retry-After value (delay-seconds or an HTTP date) into seconds from now; nullopt when absent/invalid.
std::optional<double> parse_retry_after(const std::string& value);

}  // namespace gcm
