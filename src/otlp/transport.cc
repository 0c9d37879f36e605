#include "otlp/transport.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/ascii.h"
#include "core/gzip.h"
#include "otlp/encode.h"
#include "otlp/grpc_loader.h"
#include "otlp/proto/lazy_registration.h"
#include "logs_service.pb.h"
#include "metrics_service.pb.h"
#include "trace_service.pb.h"

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

std::string read_pem(const std::string& path) {
  if (path.empty()) return "";
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in) throw TransportError(fmt::format("cannot read '{}'", path));
  return s.str();
}

std::string joined(std::span<const std::string> parts) {
  if (parts.size() == 1) return parts[0];
  size_t n = 0;
  for (const auto& p : parts) n += p.size();
  std::string out;
  out.reserve(n);
  for (const auto& p : parts) out += p;
  return out;
}

// The request as OTLP/JSON. The bytes were made by this process (or read back from its CRC-checked spool), so a
// parse failure means damage: the request is refused for good rather than sent.
std::optional<std::string> as_json(Signal signal, const std::string& protobuf) {
  auto convert = [&](auto&& request) -> std::optional<std::string> {
    if (!request.ParseFromString(protobuf)) return std::nullopt;
    return to_json(request);
  };
  switch (signal) {
    case Signal::Metrics:
      return convert(opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest{});
    case Signal::Logs:
      return convert(opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest{});
    case Signal::Traces:
      break;
  }
  return convert(opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest{});
}

}  // namespace

const std::string& TransportConfig::url(Signal s) const {
  return s == Signal::Metrics ? metrics_url : s == Signal::Logs ? logs_url : traces_url;
}

const std::string& TransportConfig::target(Signal s) const { return protocol == Protocol::Grpc ? grpc_target : url(s); }

void TransportConfig::set_endpoint(const std::string& base) {
  metrics_url = signal_url(base, signal_path(Signal::Metrics));
  logs_url = signal_url(base, signal_path(Signal::Logs));
  traces_url = signal_url(base, signal_path(Signal::Traces));
}

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

Transport::Transport(std::shared_ptr<const TransportConfig> cfg) : cfg_(std::move(cfg)), http_(cfg_->tls) {
  // Before any thread sends: the delivery's senders, the sinks of `gcm collect` and of a suite's checks run on
  // threads of their own, and protobuf's registration on first use is not safe against a lookup on another thread.
  register_proto_descriptors();
  if (cfg_->protocol != Protocol::Grpc) return;
  try {
    load_grpc_transport();
    if (cfg_->grpc_tls && !(cfg_->tls.ca_file.empty() && cfg_->tls.cert_file.empty() && cfg_->tls.key_file.empty())) {
      std::string ca = read_pem(cfg_->tls.ca_file), cert = read_pem(cfg_->tls.cert_file),
                  key = read_pem(cfg_->tls.key_file);
      load_grpc_set_tls()(cfg_->grpc_target.c_str(), ca.c_str(), cert.empty() ? nullptr : cert.c_str(),
                          key.empty() ? nullptr : key.c_str());
    }
  } catch (const TransportError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw TransportError(e.what());
  }
}

ExportAnswer Transport::send(Signal signal, std::span<const std::string> parts) {
  return cfg_->protocol == Protocol::Grpc ? send_grpc(signal, parts) : send_http(signal, parts);
}

ExportAnswer Transport::send_http(Signal signal, std::span<const std::string> parts) {
  const std::string& url = cfg_->url(signal);
  std::vector<std::string> headers = cfg_->headers;
  bool json = cfg_->protocol == Protocol::HttpJson;
  headers.push_back(json ? "Content-Type: application/json" : "Content-Type: application/x-protobuf");
  std::string body;  // when the parts cannot go as they are
  if (json) {
    auto text = as_json(signal, joined(parts));
    if (!text) {
      ExportAnswer a;
      a.kind = AnswerKind::Rejected;
      a.what = fmt::format("the {} request for {} is not a valid OTLP request", signal_name(signal), url);
      return a;
    }
    body = std::move(*text);
  }
  if (cfg_->gzip) {
    body = gzip_compress(json ? body : joined(parts));
    headers.push_back("Content-Encoding: gzip");
  }
  HttpResponse res;
  try {
    if (json || cfg_->gzip)
      res = http_.post(url, body, headers, cfg_->timeout);
    else
      res = http_.post(url, parts, headers, cfg_->timeout);
  } catch (const HttpTransportError& e) {
    return transport_failure(url, e.what());
  }
  return classify_http_answer(signal, json ? Encoding::Json : Encoding::Protobuf, url, res);
}

ExportAnswer Transport::send_grpc(Signal signal, std::span<const std::string> parts) {
  gcm_otlp_grpc_call_fn call = load_grpc_transport();  // loaded by the constructor: a lookup now
  std::vector<const char*> headers;
  for (const auto& h : cfg_->headers) headers.push_back(h.c_str());
  headers.push_back(nullptr);
  std::string body = joined(parts);
  std::string response(64 * 1024, '\0');  // an ExportXServiceResponse: a partial success at most
  size_t response_len = 0;
  char message[1024] = {};
  int code = call(cfg_->grpc_target.c_str(), cfg_->grpc_tls ? 1 : 0, grpc_method(signal), body.data(), body.size(),
                  static_cast<long>(cfg_->timeout.count()), headers.data(), cfg_->gzip ? 1 : 0, response.data(),
                  response.size(), &response_len, message, sizeof message);
  response.resize(std::min(response_len, response.size()));
  return classify_grpc_answer(signal, cfg_->grpc_target, code, message, response);
}

}  // namespace gcm::otlp
