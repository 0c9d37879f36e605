// otel: OTLP over HTTP (protobuf by default, JSON with -o protocol=http/json), gzip on request. LOG records become
// log records, METRIC records gauges/sums with the records' identity fields as attributes. Requests are sent at the
// end of each chunk and split before they pass max_request_bytes (20 MiB).
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <tuple>

#include <fmt/format.h>

#include "core/endpoint_url.h"
#include "otlp/encode.h"
#include "otlp/exporter.h"
#include "otlp/grpc_loader.h"
#include "sinks/sink.h"

namespace gcm {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

bool has_key(const Object& o, const std::string& key) {
  for (const auto& m : o) {
    if (m.key == key) return true;
  }
  return false;
}

// OTEL_RESOURCE_ATTRIBUTES="k1=v1,k2=v2"
void add_env_resource_attributes(Object& attrs) {
  std::string text = env_or("OTEL_RESOURCE_ATTRIBUTES", "");
  for (const auto& line : otlp::parse_headers_env(text)) {
    size_t colon = line.find(": ");
    std::string key = line.substr(0, colon);
    if (!has_key(attrs, key)) attrs.push_back({key, Value(line.substr(colon + 2))});
  }
}

Object resource_for(Object attrs) {
  if (!has_key(attrs, "service.name")) attrs.push_back({"service.name", Value("gcm")});
  if (!has_key(attrs, "host.name")) attrs.push_back({"host.name", Value(host_name())});
  add_env_resource_attributes(attrs);
  return attrs;
}

// Refused before any I/O: libcurl would follow file://, gopher://, ... and a file's content would end in the error.
void require_http_url(std::string_view what, const std::string& url) {
  if (auto problem = http_url_problem(url))
    throw SinkUsageError(fmt::format("sink 'otel': {}", invalid_url_message(what, url, *problem)));
}

class OtelSink : public Sink {
 public:
  OtelSink(const SinkOptions& o, const SinkContext& ctx) : log_(ctx.log) {
    otlp::ExporterConfig cfg;
    std::string endpoint = o.get_string("otel_endpoint", env_or("OTEL_EXPORTER_OTLP_ENDPOINT", ""));
    std::string logs_url = env_or("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "");
    std::string metrics_url = env_or("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "");
    if (endpoint.empty() && (logs_url.empty() || metrics_url.empty()))
      throw SinkUsageError(
          "sink 'otel' needs an endpoint: -o otel_endpoint=http://HOST:4318 or OTEL_EXPORTER_OTLP_ENDPOINT");
    bool endpoint_wins = o.has("otel_endpoint");
    bool logs_from_endpoint = endpoint_wins || logs_url.empty();
    bool metrics_from_endpoint = endpoint_wins || metrics_url.empty();
    if (logs_from_endpoint || metrics_from_endpoint)
      require_http_url(endpoint_wins ? "otel_endpoint" : "OTEL_EXPORTER_OTLP_ENDPOINT", endpoint);
    if (!logs_from_endpoint) require_http_url("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", logs_url);
    if (!metrics_from_endpoint) require_http_url("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", metrics_url);
    cfg.logs_url = logs_from_endpoint ? otlp::signal_url(endpoint, "v1/logs") : logs_url;
    cfg.metrics_url = metrics_from_endpoint ? otlp::signal_url(endpoint, "v1/metrics") : metrics_url;

    // The reference passes the timeout in seconds (and reads OTEL_EXPORTER_OTLP_TIMEOUT as seconds); so do we.
    double timeout_s = o.get_double("otel_timeout", std::atof(env_or("OTEL_EXPORTER_OTLP_TIMEOUT", "10").c_str()));
    if (timeout_s <= 0) throw SinkUsageError("sink 'otel': otel_timeout must be a positive number of seconds");
    cfg.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));

    std::string protocol = o.get_string("protocol", env_or("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"));
    if (protocol == "http/protobuf")
      cfg.protocol = otlp::Protocol::HttpProtobuf;
    else if (protocol == "http/json")
      cfg.protocol = otlp::Protocol::HttpJson;
    else if (protocol == "grpc")
      cfg.protocol = otlp::Protocol::Grpc;
    else
      throw SinkUsageError(
          fmt::format("sink 'otel': protocol '{}' is not one of http/protobuf, http/json, grpc", protocol));
    if (cfg.protocol == otlp::Protocol::Grpc) {
      // gRPC takes the endpoint as a target (no /v1/... paths); signal-specific endpoints, if set, must agree.
      std::string grpc_endpoint = endpoint.empty() ? logs_url : endpoint;
      std::tie(cfg.grpc_target, cfg.grpc_tls) = otlp::grpc_target_of(grpc_endpoint);
      try {
        otlp::load_grpc_transport();  // fail now, with the places tried, rather than at the first write
      } catch (const std::runtime_error& e) {
        throw SinkUsageError(fmt::format("sink 'otel': protocol=grpc: {}", e.what()));
      }
    }

    std::string compression = o.get_string("compression", env_or("OTEL_EXPORTER_OTLP_COMPRESSION", "none"));
    if (compression != "gzip" && compression != "none")
      throw SinkUsageError(fmt::format("sink 'otel': compression '{}' is not one of gzip, none", compression));
    cfg.gzip = compression == "gzip";

    cfg.headers = otlp::parse_headers_env(env_or("OTEL_EXPORTER_OTLP_HEADERS", ""));
    for (const auto& m : o.get_dict("headers")) cfg.headers.push_back(m.key + ": " + m.value.to_display_string());
    cfg.retry = ctx.retry;
    cfg.tls.ca_file = o.get_string("otel_ca_file", env_or("OTEL_EXPORTER_OTLP_CERTIFICATE", ""));
    cfg.tls.cert_file = o.get_string("otel_client_cert_file", env_or("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", ""));
    cfg.tls.key_file = o.get_string("otel_client_key_file", env_or("OTEL_EXPORTER_OTLP_CLIENT_KEY", ""));
    for (const auto& [what, path] : {std::pair{"otel_ca_file", cfg.tls.ca_file},
                                     std::pair{"otel_client_cert_file", cfg.tls.cert_file},
                                     std::pair{"otel_client_key_file", cfg.tls.key_file}})
      if (!path.empty() && ::access(path.c_str(), R_OK) != 0)
        throw SinkUsageError(fmt::format("sink 'otel': {} '{}' cannot be read: {}", what, path, std::strerror(errno)));
    if (cfg.tls.cert_file.empty() != cfg.tls.key_file.empty())
      throw SinkUsageError("sink 'otel': otel_client_cert_file and otel_client_key_file go together (mutual TLS)");
    max_request_bytes_ = static_cast<size_t>(o.get_int("max_request_bytes", 20 << 20));

    logs_ = std::make_unique<otlp::LogsBuilder>(resource_for(o.get_dict("log_resource_attributes")));
    metrics_ = std::make_unique<otlp::MetricsBuilder>(resource_for(o.get_dict("metric_resource_attributes")));
    exporter_ = std::make_unique<otlp::Exporter>(std::move(cfg), log_);
  }

  void begin_chunk(const BatchInfo& info) override {
    info_ = info;
    observed_ = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
  }

  void write(const Record& r) override {
    if (info_.data_type == DataType::Log) {
      logs_->add(r, info_.ts, observed_);
      if (logs_->approx_bytes() >= max_request_bytes_) send_logs();
    } else {
      metrics_->add(r, info_.ts);
      if (metrics_->approx_bytes() >= max_request_bytes_) send_metrics();
    }
  }

  void end_chunk() override {
    send_logs();
    send_metrics();
  }

  void flush() override { end_chunk(); }

 private:
  void send_logs() {
    if (logs_->records() == 0) return;
    // The builder is cleared even when sending fails: a failed request is reported by the loop, never resent
    // with the next chunk's data (which would duplicate or reorder it).
    struct Clear {
      otlp::LogsBuilder* b;
      ~Clear() { b->clear(); }
    } clear{logs_.get()};
    exporter_->send(otlp::Signal::Logs, logs_->request());
  }
  void send_metrics() {
    if (metrics_->points() == 0) {
      metrics_->clear();
      return;
    }
    struct Clear {
      otlp::MetricsBuilder* b;
      ~Clear() { b->clear(); }
    } clear{metrics_.get()};
    exporter_->send(otlp::Signal::Metrics, metrics_->request());
  }

  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<otlp::LogsBuilder> logs_;
  std::unique_ptr<otlp::MetricsBuilder> metrics_;
  std::unique_ptr<otlp::Exporter> exporter_;
  BatchInfo info_;
  uint64_t observed_ = 0;
  size_t max_request_bytes_ = 20 << 20;
};

const bool registered = register_sink({
    "otel",
    "OTLP over HTTP (protobuf or JSON) or gRPC: LOG records as log records, METRIC records as gauges/sums with attributes.",
    {
        {"otel_endpoint", "str", "base URL; /v1/logs and /v1/metrics are appended", "$OTEL_EXPORTER_OTLP_ENDPOINT"},
        {"otel_timeout", "int", "seconds per request", "$OTEL_EXPORTER_OTLP_TIMEOUT or 10"},
        {"protocol", "str", "http/protobuf, http/json or grpc (endpoint http://HOST:4317)",
         "$OTEL_EXPORTER_OTLP_PROTOCOL or http/protobuf"},
        {"compression", "str", "gzip or none", "$OTEL_EXPORTER_OTLP_COMPRESSION or none"},
        {"headers", "dict", "extra request headers, added to $OTEL_EXPORTER_OTLP_HEADERS", ""},
        {"log_resource_attributes", "dict", "resource attributes of logs (service.name=gcm and host.name added)", ""},
        {"metric_resource_attributes", "dict", "resource attributes of metrics (service.name=gcm, host.name added)",
         ""},
        {"max_request_bytes", "int", "split requests before they pass this size", "20971520"},
        {"otel_ca_file", "path", "PEM CA certificate(s) that verify an https:// endpoint (a private CA), for HTTP and gRPC",
         "$OTEL_EXPORTER_OTLP_CERTIFICATE or the system's CAs"},
        {"otel_client_cert_file", "path", "PEM client certificate for mutual TLS (with otel_client_key_file)",
         "$OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"},
        {"otel_client_key_file", "path", "PEM key of otel_client_cert_file", "$OTEL_EXPORTER_OTLP_CLIENT_KEY"},
    },
    [](const SinkOptions& o, const SinkContext& ctx) { return std::make_unique<OtelSink>(o, ctx); },
});

}  // namespace
}  // namespace gcm
