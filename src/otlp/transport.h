// How an OTLP request reaches its receiver: one POST over HTTP (protobuf or JSON, gzip on request) or one gRPC
// call, and what the answer means (otlp/answer.h). It neither retries nor queues: otlp/delivery.h does both, for
// every sender of the project.
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/http_client.h"
#include "otlp/answer.h"
#include "otlp/signal.h"

namespace gcm::otlp {

enum class Protocol { HttpProtobuf, HttpJson, Grpc };

struct TransportConfig {
  // Full URLs per signal, e.g. http://127.0.0.1:4318/v1/logs ("" for a signal this sender never sends).
  std::string metrics_url, logs_url, traces_url;
  std::string grpc_target;  // host:port for Protocol::Grpc
  bool grpc_tls = false;    // an https:// endpoint
  Protocol protocol = Protocol::HttpProtobuf;
  bool gzip = false;
  std::vector<std::string> headers;  // "Name: value"
  std::chrono::milliseconds timeout{10000};
  // https:// and gRPC over TLS: a private CA (OTEL_EXPORTER_OTLP_CERTIFICATE), a client certificate and key for
  // mutual TLS (OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE, OTEL_EXPORTER_OTLP_CLIENT_KEY); files, "" for none.
  HttpClientTls tls;

  const std::string& url(Signal s) const;
  // Where the signal goes, for messages: its URL, or the gRPC target.
  const std::string& target(Signal s) const;
  // Every signal's URL from one base endpoint, as OTLP exporters do ("http://h:4318" + "/v1/metrics").
  void set_endpoint(const std::string& base);
};

// A configuration that cannot work (a TLS file that cannot be read, no gRPC module): the caller's usage error.
struct TransportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One per sending thread: it keeps its connection alive between requests.
class Transport {
 public:
  // Throws TransportError when the configuration cannot work.
  explicit Transport(std::shared_ptr<const TransportConfig> cfg);
  // Sends one export request of `signal`, given as serialized protobuf requests that concatenate into one (protobuf
  // merges repeated fields): each part straight from its buffer when the request goes as plain protobuf over HTTP,
  // else joined (and turned into JSON, or compressed) first. Never throws for what the receiver answers.
  ExportAnswer send(Signal signal, std::span<const std::string> parts);
  const TransportConfig& config() const { return *cfg_; }

 private:
  ExportAnswer send_http(Signal signal, std::span<const std::string> parts);
  ExportAnswer send_grpc(Signal signal, std::span<const std::string> parts);
  std::shared_ptr<const TransportConfig> cfg_;
  HttpClient http_;
};

// Joins a base endpoint and a signal path the way OTLP exporters do: "http://h:4318" + "v1/logs".
std::string signal_url(const std::string& base, const std::string& path);
// "http://host:4317/" -> ("host:4317", tls=false); "https://h" -> ("h:443", tls=true); "host:4317" as is.
std::pair<std::string, bool> grpc_target_of(const std::string& endpoint);
// Parses OTEL_EXPORTER_OTLP_HEADERS ("k1=v1,k2=v2", values URL-encoded) into "Name: value" lines.
std::vector<std::string> parse_headers_env(const std::string& text);

}  // namespace gcm::otlp
