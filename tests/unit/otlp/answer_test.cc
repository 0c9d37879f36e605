// What every sender makes of an OTLP answer (answer.h): the statuses and gRPC codes OTLP calls retryable, the
// requests refused for good, the receiver's own problems, Retry-After, and partial success in both encodings.
#include "otlp/answer.h"

#include <gtest/gtest.h>

#include "metrics_service.pb.h"
#include "status.pb.h"

namespace gcm::otlp {
namespace {

HttpResponse answer(long status, std::string body = "", std::string content_type = "text/plain",
                    std::string retry_after = "") {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  r.headers["content-type"] = std::move(content_type);
  if (!retry_after.empty()) r.headers["retry-after"] = std::move(retry_after);
  return r;
}

AnswerKind kind_of(long status) {
  return classify_http_answer(Signal::Metrics, Encoding::Protobuf, "http://h/v1/metrics", answer(status)).kind;
}

TEST(OtlpAnswer, EveryHttpStatusHasItsMeaning) {
  for (long s : {200L, 202L, 204L}) EXPECT_EQ(kind_of(s), AnswerKind::Accepted) << s;
  for (long s : {429L, 502L, 503L, 504L}) EXPECT_EQ(kind_of(s), AnswerKind::Retry) << s;
  for (long s : {400L, 413L, 422L}) EXPECT_EQ(kind_of(s), AnswerKind::Rejected) << s;
  for (long s : {401L, 403L, 404L, 405L, 500L, 501L}) EXPECT_EQ(kind_of(s), AnswerKind::Refused) << s;
}

TEST(OtlpAnswer, TheReceiversMessageAndRetryAfterAreRead) {
  gcm::otlp::Status st;
  st.set_message("slow down");
  ExportAnswer a = classify_http_answer(Signal::Logs, Encoding::Protobuf, "http://h/v1/logs",
                                        answer(503, st.SerializeAsString(), "application/x-protobuf", "12"));
  EXPECT_EQ(a.kind, AnswerKind::Retry);
  EXPECT_EQ(a.retry_after, 12.0);
  EXPECT_EQ(a.what, "POST http://h/v1/logs answered HTTP 503: slow down");
  a = classify_http_answer(Signal::Logs, Encoding::Json, "u", answer(400, R"({"code":3,"message":"bad key"})",
                                                                     "application/json"));
  EXPECT_NE(a.what.find("bad key"), std::string::npos) << a.what;
  a = classify_http_answer(Signal::Logs, Encoding::Json, "u", answer(500, "line one\nline two"));
  EXPECT_NE(a.what.find("line one line two"), std::string::npos) << "on one line: " << a.what;
}

TEST(OtlpAnswer, PartialSuccessInProtobufAndJsonIsCountedNotRetried) {
  opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceResponse r;
  r.mutable_partial_success()->set_rejected_data_points(5);
  r.mutable_partial_success()->set_error_message("stale");
  ExportAnswer a = classify_http_answer(Signal::Metrics, Encoding::Protobuf, "u",
                                        answer(200, r.SerializeAsString(), "application/x-protobuf"));
  EXPECT_EQ(a.kind, AnswerKind::Accepted);
  EXPECT_EQ(a.rejected_items, 5);
  EXPECT_EQ(a.partial_message, "stale");
  EXPECT_TRUE(a.partial());
  // int64 counts are strings in proto3 JSON; receivers send numbers too. Anything else is not a count.
  for (const char* body : {R"({"partialSuccess":{"rejectedDataPoints":"3"}})",
                           R"({"partialSuccess":{"rejectedDataPoints":3}})"}) {
    a = classify_http_answer(Signal::Metrics, Encoding::Json, "u", answer(200, body, "application/json"));
    EXPECT_EQ(a.rejected_items, 3) << body;
  }
  for (const char* body : {R"({"partialSuccess":{"rejectedDataPoints":"3x"}})", "{}", "not json", ""}) {
    a = classify_http_answer(Signal::Metrics, Encoding::Json, "u", answer(200, body, "application/json"));
    EXPECT_EQ(a.kind, AnswerKind::Accepted) << body;
    EXPECT_FALSE(a.partial()) << body;
  }
}

TEST(OtlpAnswer, GrpcCodesFollowOtlpsRetryableList) {
  auto grpc = [](int code) { return classify_grpc_answer(Signal::Logs, "h:4317", code, "m", "").kind; };
  EXPECT_EQ(grpc(0), AnswerKind::Accepted);
  for (int c : {1, 4, 8, 10, 11, 14, 15}) EXPECT_EQ(grpc(c), AnswerKind::Retry) << c;
  EXPECT_EQ(grpc(3), AnswerKind::Rejected);
  for (int c : {2, 5, 7, 12, 13, 16, 99}) EXPECT_EQ(grpc(c), AnswerKind::Refused) << c;
  ExportAnswer a = classify_grpc_answer(Signal::Logs, "h:4317", 14, "connection refused", "");
  EXPECT_EQ(a.what,
            "gRPC /opentelemetry.proto.collector.logs.v1.LogsService/Export to h:4317 failed: UNAVAILABLE "
            "(connection refused)");
}

TEST(OtlpAnswer, NoAnswerIsRetried) {
  ExportAnswer a = transport_failure("http://h/v1/logs", "Connection refused");
  EXPECT_EQ(a.kind, AnswerKind::Retry);
  EXPECT_EQ(a.what, "POST http://h/v1/logs: Connection refused");
}

}  // namespace
}  // namespace gcm::otlp
