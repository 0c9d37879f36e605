#include "sinks/otel_config.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include <fmt/format.h>

#include "core/endpoint_url.h"
#include "otlp/grpc_loader.h"

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

}  // namespace

Object otel_resource(Object attrs) {
  if (!has_key(attrs, "service.name")) attrs.push_back({"service.name", Value("gcm")});
  if (!has_key(attrs, "host.name")) attrs.push_back({"host.name", Value(host_name())});
  add_env_resource_attributes(attrs);
  return attrs;
}

namespace {

// Refused before any I/O: libcurl would follow file://, gopher://, ... and a file's content would end in the error.
void require_http_url(std::string_view what, const std::string& url) {
  if (auto problem = http_url_problem(url))
    throw SinkUsageError(fmt::format("sink 'otel': {}", invalid_url_message(what, url, *problem)));
}

}  // namespace

otlp::TransportConfig otel_transport_config(const SinkOptions& o) {
  otlp::TransportConfig cfg;
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
  cfg.tls.ca_file = o.get_string("otel_ca_file", env_or("OTEL_EXPORTER_OTLP_CERTIFICATE", ""));
  cfg.tls.cert_file = o.get_string("otel_client_cert_file", env_or("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", ""));
  cfg.tls.key_file = o.get_string("otel_client_key_file", env_or("OTEL_EXPORTER_OTLP_CLIENT_KEY", ""));
  for (const auto& [what, path] :
       {std::pair{"otel_ca_file", cfg.tls.ca_file}, std::pair{"otel_client_cert_file", cfg.tls.cert_file},
        std::pair{"otel_client_key_file", cfg.tls.key_file}})
    if (!path.empty() && ::access(path.c_str(), R_OK) != 0)
      throw SinkUsageError(fmt::format("sink 'otel': {} '{}' cannot be read: {}", what, path, std::strerror(errno)));
  if (cfg.tls.cert_file.empty() != cfg.tls.key_file.empty())
    throw SinkUsageError("sink 'otel': otel_client_cert_file and otel_client_key_file go together (mutual TLS)");
  return cfg;
}

}  // namespace gcm
