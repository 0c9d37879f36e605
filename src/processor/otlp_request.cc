#include "processor/otlp_request.h"

#include <vector>

#include <google/protobuf/arena.h>
#include <google/protobuf/util/json_util.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/gzip.h"
#include "core/json_limits.h"
#include "processor/wire_enrich.h"
#include "status.pb.h"

namespace gcm::processor {

namespace {

namespace pbcl = opentelemetry::proto::collector::logs::v1;
namespace pbcm = opentelemetry::proto::collector::metrics::v1;
namespace pbct = opentelemetry::proto::collector::trace::v1;

std::string_view media_type(std::string_view ct) {
  ct = ct.substr(0, ct.find(';'));
  while (!ct.empty() && ct.back() == ' ') ct.remove_suffix(1);
  while (!ct.empty() && ct.front() == ' ') ct.remove_prefix(1);
  return ct;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::string base64(std::string_view bytes) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
  }
  if (i + 1 == bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    out += {t[v >> 18], t[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == bytes.size()) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
  }
  return out;
}

// OTLP/JSON writes trace and span ids as hex, protobuf's JSON mapping expects base64 for bytes: rewrite them.
void hex_ids_to_base64(nlohmann::json& j) {
  if (j.is_array()) {
    for (auto& e : j) hex_ids_to_base64(e);
    return;
  }
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if ((k == "traceId" || k == "spanId" || k == "parentSpanId") && it->is_string()) {
      const std::string& hex = it->get_ref<const std::string&>();
      if (hex.size() % 2) throw std::invalid_argument(fmt::format("{} '{}' is not hex", k, hex));
      std::string bytes;
      for (size_t i = 0; i < hex.size(); i += 2) {
        int v = 0;
        for (size_t d = i; d < i + 2; ++d) {
          char c = hex[d];
          int x = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
          if (x < 0) throw std::invalid_argument(fmt::format("{} '{}' is not hex", k, hex));
          v = v * 16 + x;
        }
        bytes.push_back(static_cast<char>(v));
      }
      *it = base64(bytes);
    } else {
      hex_ids_to_base64(*it);
    }
  }
}

// Decodes `body` (OTLP/JSON or protobuf) into `req`; false with r.status 400 and the message when it does not.
template <typename Request>
bool decode_into(std::string_view body, bool json, const char* type_name, Request* req, RequestResult& r) {
  if (json) {
    std::string why;  // set only when the body is not JSON at all; too deep is one such reason
    auto j = parse_json_limited(body, &why);
    if (j.is_discarded() || !j.is_object()) {
      r.status = 400;
      r.message =
          fmt::format("the body is not a JSON object ({} expected){}{}", type_name, why.empty() ? "" : ": ", why);
      return false;
    }
    try {
      hex_ids_to_base64(j);
    } catch (const std::invalid_argument& e) {
      r.status = 400;
      r.message = e.what();
      return false;
    }
    google::protobuf::util::JsonParseOptions opts;
    opts.ignore_unknown_fields = true;
    auto st = google::protobuf::util::JsonStringToMessage(j.dump(), req, opts);
    if (!st.ok()) {
      r.status = 400;
      r.message = fmt::format("the JSON body is not an OTLP {}: {}", type_name, std::string(st.message()));
      return false;
    }
  } else if (!req->ParseFromArray(body.data(), static_cast<int>(body.size()))) {
    r.status = 400;
    r.message = fmt::format("the body ({} bytes) does not decode as a protobuf {}", body.size(), type_name);
    return false;
  }
  return true;
}

template <typename Request>
RequestResult decode_enrich_encode_on(google::protobuf::Arena& arena, std::string_view body, bool json,
                                      const char* type_name, const HostLookup& lookup, uint64_t max_added) {
  RequestResult r;
  r.json = json;
  auto* req = google::protobuf::Arena::CreateMessage<Request>(&arena);
  if (!decode_into(body, json, type_name, req, r)) return r;
  EnrichStats st = enrich(*req, lookup, max_added);
  r.items = st.items;
  r.enriched = st.enriched;
  req->SerializeToString(&r.forward);
  return r;
}

// The arena starts in a per-thread block that is kept between requests and grows to the largest request seen (up to
// 64 MiB): fresh blocks from malloc are fresh pages from the kernel, whose page faults cost more than decoding,
// enriching and encoding together.
template <typename Request>
RequestResult decode_enrich_encode(std::string_view body, bool json, const char* type_name, const HostLookup& lookup,
                                   uint64_t max_added) {
  thread_local std::vector<char> block(1 << 20);
  RequestResult r;
  size_t used = 0;
  {
    google::protobuf::ArenaOptions ao;
    ao.initial_block = block.data();
    ao.initial_block_size = block.size();
    ao.max_block_size = 8 << 20;
    google::protobuf::Arena arena(ao);
    r = decode_enrich_encode_on<Request>(arena, body, json, type_name, lookup, max_added);
    used = static_cast<size_t>(arena.SpaceAllocated());
  }
  if (used > block.size() && used <= (64u << 20)) block = std::vector<char>(used + used / 4);
  return r;
}

// A request that enrichment would take past max_output: 413, which OTLP clients do not retry (the same request
// would be refused again); the message names the bound and what to do.
RequestResult too_large(const EnrichedTooLarge& e, size_t max_output, bool json, bool message_path) {
  RequestResult r;
  r.status = 413;
  r.json = json;
  r.message_path = message_path;
  r.message = fmt::format(
      "{}: an enriched request may take at most {} bytes (--queue-size); send fewer items per "
      "request",
      e.what(), max_output);
  return r;
}

// The checks every request passes before its body is decoded: the content type (r.json from it), the size, and the
// Content-Encoding (a gzip body inflated into `inflated`, and `body` pointed at it). False with r's error status.
bool prepare_body(std::string_view content_type, std::string_view content_encoding, std::string_view& body,
                  size_t max_body, std::string& inflated, RequestResult& r) {
  std::string_view mt = media_type(content_type);
  if (iequals(mt, "application/json")) {
    r.json = true;
  } else if (!iequals(mt, "application/x-protobuf") && !iequals(mt, "application/protobuf")) {
    r.status = 415;
    r.json = true;
    r.message = fmt::format("unsupported content type '{}' (expected application/x-protobuf or application/json)",
                            content_type);
    return false;
  }
  if (body.size() > max_body) {
    r.status = 413;
    r.message = fmt::format("the body ({} bytes) exceeds the limit of {} bytes", body.size(), max_body);
    return false;
  }
  std::string_view enc = media_type(content_encoding);
  if (iequals(enc, "gzip") || iequals(enc, "deflate")) {
    try {
      inflated = inflate_bounded(body, max_body);
    } catch (const std::length_error& e) {
      r.status = 413;
      r.message = e.what();
      return false;
    } catch (const std::exception& e) {
      r.status = 400;
      r.message = fmt::format("Content-Encoding {}: {}", enc, e.what());
      return false;
    }
    body = inflated;
  } else if (!enc.empty() && !iequals(enc, "identity")) {
    r.status = 415;
    r.message = fmt::format("unsupported Content-Encoding '{}' (expected gzip or identity)", content_encoding);
    return false;
  }
  return true;
}

}  // namespace

void recycle_forward_buffer(std::string& kept, std::string&& forward) {
  // 8 MiB holds the enriched form of a 3 MiB request, far over what an exporter sends at once (dcgm-exporter's
  // scrape of an 8-GPU node enriches to ~60 KiB).
  constexpr size_t kKeepAtMost = 8u << 20;
  if (forward.capacity() > kKeepAtMost) {
    kept = std::string();
  } else if (forward.capacity() > kept.capacity()) {  // a request refused before decoding never took the buffer
    kept = std::move(forward);
  }
}

bool plain_protobuf(std::string_view content_type, std::string_view content_encoding) {
  std::string_view mt = media_type(content_type), enc = media_type(content_encoding);
  return (iequals(mt, "application/x-protobuf") || iequals(mt, "application/protobuf")) &&
         (enc.empty() || iequals(enc, "identity"));
}

RequestResult process_request(Signal signal, std::string_view content_type, std::string_view content_encoding,
                              std::string_view body, size_t max_body, const HostLookup& lookup, Decoder decoder,
                              std::string recycled, size_t max_output) {
  RequestResult r;
  r.forward = std::move(recycled);
  std::string inflated;
  if (!prepare_body(content_type, content_encoding, body, max_body, inflated, r)) return r;
  bool json = r.json;
  if (!json && decoder == Decoder::Wire) {
    WireOutcome w;
    try {
      w = signal == Signal::Metrics ? wire_enrich_metrics(body, lookup, r.forward, max_output)
          : signal == Signal::Logs  ? wire_enrich_logs(body, lookup, r.forward, max_output)
                                    : wire_enrich_traces(body, lookup, r.forward, max_output);
    } catch (const EnrichedTooLarge& e) {  // not for the message path, which would grow it further
      r.forward.clear();
      RequestResult refused = too_large(e, max_output, false, false);
      refused.forward = std::move(r.forward);  // the buffer stays the receiver's
      return refused;
    }
    if (w.ok) {
      r.items = w.stats.items;
      r.enriched = w.stats.enriched;
      return r;
    }
    // Not taken (see wire_enrich.h): the message path decides, at the cost of a second pass and of the lookups
    // asked again.
    r.forward.clear();
  }
  bool fell_back = !json && decoder == Decoder::Wire;
  // What the job attributes may add to the request (the message path's objects counted in, enrich.h).
  uint64_t max_added = max_output == 0 ? 0 : max_output > body.size() ? max_output - body.size() : 1;
  try {
    switch (signal) {
      case Signal::Metrics:
        r = decode_enrich_encode<pbcm::ExportMetricsServiceRequest>(body, json, "ExportMetricsServiceRequest", lookup,
                                                                    max_added);
        break;
      case Signal::Logs:
        r = decode_enrich_encode<pbcl::ExportLogsServiceRequest>(body, json, "ExportLogsServiceRequest", lookup,
                                                                 max_added);
        break;
      case Signal::Traces:
        r = decode_enrich_encode<pbct::ExportTraceServiceRequest>(body, json, "ExportTraceServiceRequest", lookup,
                                                                  max_added);
        break;
    }
  } catch (const EnrichedTooLarge& e) {
    return too_large(e, max_output, json, fell_back);
  }
  r.message_path = fell_back;
  return r;
}

RequestResult decode_metrics_request(std::string_view content_type, std::string_view content_encoding,
                                     std::string_view body, size_t max_body,
                                     opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest& out) {
  RequestResult r;
  std::string inflated;
  if (!prepare_body(content_type, content_encoding, body, max_body, inflated, r)) return r;
  decode_into(body, r.json, "ExportMetricsServiceRequest", &out, r);
  return r;
}

std::string success_body(Signal signal, bool json, int64_t rejected, const std::string& message) {
  if (json) {
    if (rejected == 0 && message.empty()) return "{}";
    const char* key = signal == Signal::Metrics ? "rejectedDataPoints"
                      : signal == Signal::Logs  ? "rejectedLogRecords"
                                                : "rejectedSpans";
    nlohmann::json j = {{"partialSuccess", {{key, std::to_string(rejected)}, {"errorMessage", message}}}};
    return j.dump();
  }
  std::string out;
  if (rejected == 0 && message.empty()) return out;
  switch (signal) {
    case Signal::Metrics: {
      pbcm::ExportMetricsServiceResponse r;
      r.mutable_partial_success()->set_rejected_data_points(rejected);
      r.mutable_partial_success()->set_error_message(message);
      r.SerializeToString(&out);
      break;
    }
    case Signal::Logs: {
      pbcl::ExportLogsServiceResponse r;
      r.mutable_partial_success()->set_rejected_log_records(rejected);
      r.mutable_partial_success()->set_error_message(message);
      r.SerializeToString(&out);
      break;
    }
    case Signal::Traces: {
      pbct::ExportTraceServiceResponse r;
      r.mutable_partial_success()->set_rejected_spans(rejected);
      r.mutable_partial_success()->set_error_message(message);
      r.SerializeToString(&out);
      break;
    }
  }
  return out;
}

std::string error_body(bool json, int http_status, const std::string& message) {
  // gRPC codes matching the HTTP status (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, UNIMPLEMENTED, UNAVAILABLE).
  int code = http_status == 400 ? 3 : http_status == 413 ? 8 : http_status == 415 ? 12 : http_status == 503 ? 14 : 2;
  if (json) return nlohmann::json{{"code", code}, {"message", message}}.dump();
  gcm::otlp::Status st;
  st.set_code(code);
  st.set_message(message);
  return st.SerializeAsString();
}

}  // namespace gcm::processor
