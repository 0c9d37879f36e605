// A small HTTP client (libcurl) for POSTing telemetry: keeps the connection alive between requests, bounded by a
// timeout, and reports transport failures separately from HTTP answers so callers can decide what to retry.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
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
// and key for mutual TLS ("" for none).
struct HttpClientTls {
  std::string ca_file, cert_file, key_file;
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientTls tls = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  HttpResponse post(const std::string& url, const std::string& body, const std::vector<std::string>& headers,
                    std::chrono::milliseconds timeout);
  HttpResponse get(const std::string& url, std::chrono::milliseconds timeout,
                   const std::vector<std::string>& headers = {});

 private:
  HttpResponse perform(const std::string& url, const std::string* body, const std::vector<std::string>& headers,
                       std::chrono::milliseconds timeout);
  void* curl_;
  HttpClientTls tls_;
};

// Parses a Retry-After value (delay-seconds or an HTTP date) into seconds from now; nullopt when absent/invalid.
std::optional<double> parse_retry_after(const std::string& value);

}  // namespace gcm
