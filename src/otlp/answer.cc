#include "otlp/answer.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/ascii.h"
#include "core/json_limits.h"
#include "logs_service.pb.h"
#include "metrics_service.pb.h"
#include "status.pb.h"
#include "trace_service.pb.h"

namespace gcm::otlp {

namespace {

template <typename Response, typename Count>
void read_partial_success(std::string_view bytes, Count count, ExportAnswer& a) {
  Response r;
  if (!r.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) || !r.has_partial_success()) return;
  a.rejected_items = count(r.partial_success());
  a.partial_message = r.partial_success().error_message();
}

// Partial success in a protobuf response body (ExportXServiceResponse).
void protobuf_partial_success(Signal signal, std::string_view bytes, ExportAnswer& a) {
  if (bytes.empty()) return;
  namespace pbl = opentelemetry::proto::collector::logs::v1;
  namespace pbm = opentelemetry::proto::collector::metrics::v1;
  namespace pbt = opentelemetry::proto::collector::trace::v1;
  switch (signal) {
    case Signal::Metrics:
      read_partial_success<pbm::ExportMetricsServiceResponse>(
          bytes, [](const auto& p) { return p.rejected_data_points(); }, a);
      break;
    case Signal::Logs:
      read_partial_success<pbl::ExportLogsServiceResponse>(
          bytes, [](const auto& p) { return p.rejected_log_records(); }, a);
      break;
    case Signal::Traces:
      read_partial_success<pbt::ExportTraceServiceResponse>(bytes, [](const auto& p) { return p.rejected_spans(); },
                                                            a);
      break;
  }
}

// Partial success in a JSON response body: {"partialSuccess": {"rejectedDataPoints": "3", "errorMessage": "..."}}
// (int64 counts are strings in proto3 JSON, but receivers also send numbers).
void json_partial_success(std::string_view body, ExportAnswer& a) {
  if (body.empty()) return;
  auto j = parse_json_limited(body);
  if (!j.is_object() || !j.contains("partialSuccess") || !j["partialSuccess"].is_object()) return;
  const auto& ps = j["partialSuccess"];
  for (const char* k : {"rejectedDataPoints", "rejectedLogRecords", "rejectedSpans"}) {
    if (!ps.contains(k)) continue;
    const auto& v = ps[k];
    if (v.is_number_integer()) {
      a.rejected_items = v.get<int64_t>();
    } else if (v.is_string()) {
      const std::string& t = v.get_ref<const std::string&>();
      int64_t n = 0;
      auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
      if (ec == std::errc() && end == t.data() + t.size()) a.rejected_items = n;
    }
  }
  if (ps.contains("errorMessage") && ps["errorMessage"].is_string()) a.partial_message = ps["errorMessage"];
}

}  // namespace

std::string answer_text(const HttpResponse& res) {
  std::string ct = res.header("content-type");
  if (ct.find("protobuf") != std::string::npos) {
    gcm::otlp::Status st;
    if (st.ParseFromString(res.body) && !st.message().empty()) return st.message();
  }
  if (ct.find("json") != std::string::npos) {
    auto j = parse_json_limited(res.body);
    if (j.is_object() && j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
  }
  std::string body = res.body.substr(0, 512);
  std::replace_if(body.begin(), body.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return std::string(ascii_trim(body));
}

ExportAnswer classify_http_answer(Signal signal, Encoding encoding, const std::string& url, const HttpResponse& res) {
  ExportAnswer a;
  if (res.status >= 200 && res.status < 300) {
    if (encoding == Encoding::Protobuf)
      protobuf_partial_success(signal, res.body, a);
    else
      json_partial_success(res.body, a);
    if (a.partial())
      a.what = fmt::format("{} rejected {} {}: {}", url, a.rejected_items, item_name(signal), a.partial_message);
    return a;
  }
  a.what = fmt::format("POST {} answered HTTP {}: {}", url, res.status, answer_text(res));
  if (is_retryable_http_status(res.status)) {
    a.kind = AnswerKind::Retry;
    a.retry_after = parse_retry_after(res.header("retry-after"));
  } else if (res.status == 400 || res.status == 413 || res.status == 422) {
    a.kind = AnswerKind::Rejected;
  } else {
    a.kind = AnswerKind::Refused;
  }
  return a;
}

ExportAnswer transport_failure(const std::string& url, const std::string& why) {
  ExportAnswer a;
  a.kind = AnswerKind::Retry;
  a.what = fmt::format("POST {}: {}", url, why);
  return a;
}

ExportAnswer classify_grpc_answer(Signal signal, const std::string& target, int code, const std::string& message,
                                  std::string_view response) {
  ExportAnswer a;
  if (code == 0) {
    protobuf_partial_success(signal, response, a);
    if (a.partial())
      a.what = fmt::format("{} rejected {} {}: {}", target, a.rejected_items, item_name(signal), a.partial_message);
    return a;
  }
  static const char* names[] = {
      "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  a.what = fmt::format("gRPC {} to {} failed: {} ({})", grpc_method(signal), target,
                       code > 0 && code <= 16 ? names[code] : "status " + std::to_string(code), message);
  switch (code) {
    case 1:   // CANCELLED
    case 4:   // DEADLINE_EXCEEDED
    case 8:   // RESOURCE_EXHAUSTED
    case 10:  // ABORTED
    case 11:  // OUT_OF_RANGE
    case 14:  // UNAVAILABLE
    case 15:  // DATA_LOSS
      a.kind = AnswerKind::Retry;
      break;
    case 3:  // INVALID_ARGUMENT
      a.kind = AnswerKind::Rejected;
      break;
    default:
      a.kind = AnswerKind::Refused;
  }
  return a;
}

}  // namespace gcm::otlp
