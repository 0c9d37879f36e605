// What an OTLP receiver's answer means for the request it answers: the one place that reads OTLP/HTTP statuses,
// gRPC codes and partial success, for every sender of the project (otlp/delivery.h).
//
// OTLP's rules: a 2xx (gRPC OK) accepted the request, possibly rejecting some of its items (partial success: not to
// be sent again); 429, 502, 503, 504 (gRPC CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, OUT_OF_RANGE,
// UNAVAILABLE, DATA_LOSS) and no answer at all mean "try again later", honouring Retry-After; 400, 413, 422 (gRPC
// INVALID_ARGUMENT) refuse the request's bytes themselves, which can never succeed; anything else (401, 403, 404,
// 5xx, UNAUTHENTICATED, ...) is about the receiver or its configuration, and a sender that keeps its requests may
// send them again once that is fixed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/http_client.h"
#include "otlp/signal.h"

namespace gcm::otlp {

enum class AnswerKind {
  Accepted,  // 2xx / OK (rejected_items may be > 0)
  Retry,     // no answer, or "try again later"
  Rejected,  // the request's bytes refused: never send them again
  Refused,   // the receiver's or the configuration's problem: keep the request if you can
};

struct ExportAnswer {
  AnswerKind kind = AnswerKind::Accepted;
  std::string what;                   // for a log line: "POST http://h/v1/logs answered HTTP 503: busy"
  std::optional<double> retry_after;  // seconds, from Retry-After
  int64_t rejected_items = 0;         // partial success
  std::string partial_message;        // partial success's error_message
  bool partial() const { return rejected_items > 0 || !partial_message.empty(); }
};

enum class Encoding { Protobuf, Json };

// An OTLP/HTTP answer to a POST of `signal` to `url` (the request sent in `encoding`).
ExportAnswer classify_http_answer(Signal signal, Encoding encoding, const std::string& url, const HttpResponse& res);
// No HTTP answer (refused, reset, timed out): always Retry.
ExportAnswer transport_failure(const std::string& url, const std::string& why);
// A gRPC status code (0 OK) with its message, and the response message's bytes when OK.
ExportAnswer classify_grpc_answer(Signal signal, const std::string& target, int code, const std::string& message,
                                  std::string_view response);

// The receiver's explanation in an error answer: a google.rpc.Status (protobuf or JSON), else the start of the raw
// text on one line.
std::string answer_text(const HttpResponse& res);

}  // namespace gcm::otlp
