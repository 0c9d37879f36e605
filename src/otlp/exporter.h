// Sends OTLP export requests over HTTP (protobuf or JSON, optional gzip) with retries: 429, 502, 503, 504 and
// connection failures are retried with exponential backoff, honouring Retry-After; any other failure (400, 401,
// 413, 500, ...) is reported at once with the receiver's message. Partial success is logged and counted.
#pragma once

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <google/protobuf/message.h>
#include <spdlog/logger.h>

#include "core/http_client.h"
#include "core/retry.h"

namespace gcm::otlp {

enum class Protocol { HttpProtobuf, HttpJson, Grpc };
enum class Signal { Logs, Metrics };

struct ExporterConfig {
  std::string logs_url;     // full URL, e.g. http://127.0.0.1:4318/v1/logs
  std::string metrics_url;  // full URL, e.g. http://127.0.0.1:4318/v1/metrics
  std::string grpc_target;  // host:port for Protocol::Grpc
  bool grpc_tls = false;    // an https:// endpoint
  Protocol protocol = Protocol::HttpProtobuf;
  bool gzip = false;
  std::vector<std::string> headers;  // "Name: value"
  std::chrono::milliseconds timeout{10000};
  RetryPolicy retry;
  // https:// and gRPC over TLS: a private CA (OTEL_EXPORTER_OTLP_CERTIFICATE), a client certificate and key for
  // mutual TLS (OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE, OTEL_EXPORTER_OTLP_CLIENT_KEY); files, "" for none.
  HttpClientTls tls;
};

struct ExportStats {
  uint64_t requests = 0;
  uint64_t retries = 0;
  uint64_t rejected = 0;  // items the receiver reported as rejected (partial success)
};

// An export that failed: a final answer about the request, or one of the two kinds below. Its own type, not a sink's
// (otlp/ sits below sinks/): the otel sink reports it as a SinkError, the agent's spooler decides by its kind what
// to keep.
struct ExportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// What send() throws when every attempt failed in a way that may pass (connection refused, 429/502/503/504, a
// retryable gRPC code): a caller that keeps the request (the agent's spool) tries it again later, while any other
// ExportError is a final answer about this request.
struct TransientExportError : ExportError {
  using ExportError::ExportError;
};
// The receiver refused the request itself (HTTP 400, 413, 422; gRPC INVALID_ARGUMENT): sending the same bytes again
// can never succeed. Other final answers (401, 403, 404, 5xx, UNAUTHENTICATED, ...) are about the receiver or its
// configuration, and a caller that keeps the request (the agent's spool) may send it again once that is fixed.
struct RejectedRequestError : ExportError {
  using ExportError::ExportError;
};

class Exporter {
 public:
  Exporter(ExporterConfig cfg, std::shared_ptr<spdlog::logger> log);
  // Sends one request; throws TransientExportError after the retries are exhausted, ExportError on a non-retryable
  // answer.
  void send(Signal signal, const google::protobuf::Message& request);
  const ExportStats& stats() const { return stats_; }

 private:
  void attempt(Signal signal, const std::string& url, const std::string& body);
  void attempt_grpc(Signal signal, const std::string& body);
  void report_partial_success(Signal signal, const std::string& target, const std::string& response);
  ExporterConfig cfg_;
  std::shared_ptr<spdlog::logger> log_;
  HttpClient http_;
  ExportStats stats_;
};

// Joins a base endpoint and a signal path the way OTLP exporters do: "http://h:4318" + "v1/logs".
std::string signal_url(const std::string& base, const std::string& path);
// "http://host:4317/" -> ("host:4317", tls=false); "https://h" -> ("h:443", tls=true); "host:4317" as is.
std::pair<std::string, bool> grpc_target_of(const std::string& endpoint);
// Parses OTEL_EXPORTER_OTLP_HEADERS ("k1=v1,k2=v2", values URL-encoded) into "Name: value" lines.
std::vector<std::string> parse_headers_env(const std::string& text);

}  // namespace gcm::otlp
