#include "otlp/exporter.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/ascii.h"
#include "core/gzip.h"
#include "core/json_limits.h"
#include "otlp/encode.h"
#include "otlp/grpc_loader.h"
#include "otlp/proto/lazy_registration.h"
#include "logs_service.pb.h"
#include "metrics_service.pb.h"
#include "status.pb.h"

namespace gcm::otlp {

namespace {

std::string url_decode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// The receiver's explanation in an error answer: a google.rpc.Status (protobuf or JSON), else the raw text.
std::string error_message(const HttpResponse& res) {
  std::string ct = res.header("content-type");
  if (ct.find("application/x-protobuf") != std::string::npos) {
    gcm::otlp::Status st;
    if (st.ParseFromString(res.body) && !st.message().empty()) return st.message();
  }
  if (ct.find("json") != std::string::npos) {
    auto j = parse_json_limited(res.body);
    if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  }
  std::string body = res.body.substr(0, 512);
  for (char& c : body) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return std::string(ascii_trim(body));
}

}  // namespace

std::string signal_url(const std::string& base, const std::string& path) {
  if (!base.empty() && base.back() == '/') return base + path;
  return base + "/" + path;
}

std::vector<std::string> parse_headers_env(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string_view item(text.data() + start, end - start);
    size_t eq = item.find('=');
    if (eq != std::string_view::npos) {
      std::string key(ascii_trim(item.substr(0, eq)));
      if (!key.empty()) out.push_back(key + ": " + std::string(ascii_trim(url_decode(item.substr(eq + 1)))));
    }
    start = end + 1;
  }
  return out;
}

namespace {
std::string read_pem(const std::string& path) {
  if (path.empty()) return "";
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in) throw ExportError(fmt::format("cannot read '{}'", path));
  return s.str();
}
}  // namespace

Exporter::Exporter(ExporterConfig cfg, std::shared_ptr<spdlog::logger> log)
    : cfg_(std::move(cfg)), log_(std::move(log)), http_(cfg_.tls) {
  // Before any thread exports: sinks of `gcm collect` and of a suite's checks run on threads of their own, and the
  // agent's spooler sends from one. Its cost, once per process with an OTLP sink, is protobuf's own files (~0.7 M
  // instructions); the OTLP files would be registered at the first export anyway.
  register_proto_descriptors();
  if (cfg_.protocol == Protocol::Grpc && cfg_.grpc_tls &&
      !(cfg_.tls.ca_file.empty() && cfg_.tls.cert_file.empty() && cfg_.tls.key_file.empty())) {
    std::string ca = read_pem(cfg_.tls.ca_file), cert = read_pem(cfg_.tls.cert_file), key = read_pem(cfg_.tls.key_file);
    try {
      load_grpc_set_tls()(cfg_.grpc_target.c_str(), ca.c_str(), cert.empty() ? nullptr : cert.c_str(),
                          key.empty() ? nullptr : key.c_str());
    } catch (const std::runtime_error& e) {
      throw ExportError(e.what());
    }
  }
}

void Exporter::attempt(Signal signal, const std::string& url, const std::string& body) {
  std::vector<std::string> headers = cfg_.headers;
  headers.push_back(cfg_.protocol == Protocol::HttpJson ? "Content-Type: application/json"
                                                        : "Content-Type: application/x-protobuf");
  const std::string* payload = &body;
  std::string compressed;
  if (cfg_.gzip) {
    compressed = gzip_compress(body);
    payload = &compressed;
    headers.push_back("Content-Encoding: gzip");
  }
  HttpResponse res;
  try {
    res = http_.post(url, *payload, headers, cfg_.timeout);
  } catch (const HttpTransportError& e) {
    throw RetryableError(e.what());
  }
  ++stats_.requests;
  if (res.status >= 200 && res.status < 300) {
    if (cfg_.protocol == Protocol::HttpProtobuf) {
      report_partial_success(signal, url, res.body);
      return;
    }
    int64_t rejected = 0;
    std::string msg;
    if (!res.body.empty()) {
      auto j = parse_json_limited(res.body);
      if (j.is_object() && j.contains("partialSuccess") && j["partialSuccess"].is_object()) {
        const auto& ps = j["partialSuccess"];
        for (const char* k : {"rejectedLogRecords", "rejectedDataPoints"}) {
          if (ps.contains(k)) {
            rejected = ps[k].is_string() ? std::stoll(ps[k].get<std::string>()) : ps[k].get<int64_t>();
          }
        }
        if (ps.contains("errorMessage") && ps["errorMessage"].is_string()) msg = ps["errorMessage"];
      }
    }
    if (rejected > 0 || !msg.empty()) {
      stats_.rejected += static_cast<uint64_t>(rejected);
      if (log_)
        log_->error("OTLP receiver {} rejected {} {}: {}", url, rejected,
                    signal == Signal::Logs ? "log records" : "data points", msg);
    }
    return;
  }
  std::string why = fmt::format("POST {} answered HTTP {}: {}", url, res.status, error_message(res));
  if (is_retryable_http_status(res.status)) throw RetryableError(why, parse_retry_after(res.header("retry-after")));
  if (res.status == 400 || res.status == 413 || res.status == 422) throw RejectedRequestError(why);
  throw ExportError(why);
}

// Partial success: the receiver accepted the request but rejected some items. Not retryable (per OTLP).
void Exporter::report_partial_success(Signal signal, const std::string& target, const std::string& response) {
  if (response.empty()) return;
  int64_t rejected = 0;
  std::string msg;
  if (signal == Signal::Logs) {
    opentelemetry::proto::collector::logs::v1::ExportLogsServiceResponse r;
    if (r.ParseFromString(response) && r.has_partial_success()) {
      rejected = r.partial_success().rejected_log_records();
      msg = r.partial_success().error_message();
    }
  } else {
    opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceResponse r;
    if (r.ParseFromString(response) && r.has_partial_success()) {
      rejected = r.partial_success().rejected_data_points();
      msg = r.partial_success().error_message();
    }
  }
  if (rejected > 0 || !msg.empty()) {
    stats_.rejected += static_cast<uint64_t>(rejected);
    if (log_)
      log_->error("OTLP receiver {} rejected {} {}: {}", target, rejected,
                  signal == Signal::Logs ? "log records" : "data points", msg);
  }
}

std::pair<std::string, bool> grpc_target_of(const std::string& endpoint) {
  std::string t = endpoint;
  bool tls = false;
  if (t.rfind("https://", 0) == 0) {
    tls = true;
    t = t.substr(8);
  } else if (t.rfind("http://", 0) == 0) {
    t = t.substr(7);
  }
  t = t.substr(0, t.find('/'));
  if (tls && t.find(':') == std::string::npos) t += ":443";
  return {t, tls};
}

void Exporter::attempt_grpc(Signal signal, const std::string& body) {
  gcm_otlp_grpc_call_fn call;
  try {
    call = load_grpc_transport();
  } catch (const std::runtime_error& e) {
    throw ExportError(e.what());
  }
  const char* method = signal == Signal::Logs ? "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
                                              : "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export";
  std::vector<const char*> headers;
  for (const auto& h : cfg_.headers) headers.push_back(h.c_str());
  headers.push_back(nullptr);
  std::string response(65536, '\0');
  size_t response_len = 0;
  char message[1024] = {};
  int code = call(cfg_.grpc_target.c_str(), cfg_.grpc_tls ? 1 : 0, method, body.data(), body.size(),
                  static_cast<long>(cfg_.timeout.count()), headers.data(), cfg_.gzip ? 1 : 0, response.data(),
                  response.size(), &response_len, message, sizeof message);
  ++stats_.requests;
  if (code == 0) {
    response.resize(std::min(response_len, response.size()));
    report_partial_success(signal, cfg_.grpc_target, response);
    return;
  }
  static const char* names[] = {
      "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  std::string why = fmt::format("gRPC {} to {} failed: {} ({})", method, cfg_.grpc_target,
                                code >= 0 && code <= 16 ? names[code] : "status " + std::to_string(code), message);
  // The codes OTLP calls retryable: CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, OUT_OF_RANGE,
  // UNAVAILABLE, DATA_LOSS.
  switch (code) {
    case 1:
    case 4:
    case 8:
    case 10:
    case 11:
    case 14:
    case 15:
      throw RetryableError(why);
    case 3:
      throw RejectedRequestError(why);
    default:
      throw ExportError(why);
  }
}

void Exporter::send(Signal signal, const google::protobuf::Message& request) {
  const std::string& url = signal == Signal::Logs ? cfg_.logs_url : cfg_.metrics_url;
  std::string body = cfg_.protocol == Protocol::HttpJson ? to_json(request) : request.SerializeAsString();
  auto once = [&] {
    if (cfg_.protocol == Protocol::Grpc)
      attempt_grpc(signal, body);
    else
      attempt(signal, url, body);
  };
  try {
    retry_with_backoff(cfg_.retry, once, [this](const RetryableError& e, int retry, double delay) {
      ++stats_.retries;
      if (log_) log_->warn("{}; retry {}/{} in {:.1f} s", e.what(), retry + 1, cfg_.retry.retries, delay);
    });
  } catch (const RetriesExhausted& e) {
    throw TransientExportError(e.what());
  }
}

}  // namespace gcm::otlp
