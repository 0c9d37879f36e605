// OTLP's transport against a small receiver of the tests' own: the request as it goes out (protobuf from its parts,
// JSON, gzip, headers, paths), and the answer read as OTLP says (answer.h); retries are delivery_test.cc's.
#include "otlp/transport.h"

#include <gtest/gtest.h>

#include "otlp/encode.h"
#include "scripted_receiver.h"
#include "status.pb.h"

namespace gcm {
namespace {

using testing::Answer;
using testing::ScriptedReceiver;

opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest sample_logs() {
  static Schema s = [] {
    Schema x;
    x.name = "S";
    x.fields = {{"job_id"}};
    return x;
  }();
  otlp::LogsBuilder b({{"service.name", Value("gcm")}});
  Record r(s);
  r[0] = "17";
  b.add(r, 1700000000, 1);
  return b.request();
}

std::shared_ptr<const otlp::TransportConfig> config_for(const ScriptedReceiver& rx,
                                                       otlp::Protocol protocol = otlp::Protocol::HttpProtobuf) {
  auto cfg = std::make_shared<otlp::TransportConfig>();
  cfg->logs_url = rx.url("/v1/logs");
  cfg->metrics_url = rx.url("/v1/metrics");
  cfg->traces_url = rx.url("/v1/traces");
  cfg->protocol = protocol;
  cfg->timeout = std::chrono::seconds(5);
  return cfg;
}

std::string logs_bytes() { return sample_logs().SerializeAsString(); }

TEST(OtlpTransport, PartsGoOutAsOneProtobufBodyToTheSignalsPath) {
  ScriptedReceiver rx({{200, ""}});
  otlp::Transport t(config_for(rx));
  // Two serialized requests concatenate into one: protobuf merges their repeated fields.
  std::vector<std::string> parts = {logs_bytes(), logs_bytes()};
  otlp::ExportAnswer a = t.send(otlp::Signal::Logs, parts);
  EXPECT_EQ(a.kind, otlp::AnswerKind::Accepted);
  ASSERT_EQ(rx.bodies.size(), 1u);
  EXPECT_EQ(rx.bodies[0], parts[0] + parts[1]);
  EXPECT_EQ(rx.paths[0], "/v1/logs");
  EXPECT_EQ(rx.content_types[0], "application/x-protobuf");
  opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest merged;
  ASSERT_TRUE(merged.ParseFromString(rx.bodies[0]));
  EXPECT_EQ(merged.resource_logs_size(), 2);
}

TEST(OtlpTransport, AnErrorAnswerIsReadWithTheReceiversMessage) {
  gcm::otlp::Status bad;
  bad.set_code(3);
  bad.set_message("attribute key too long");
  gcm::otlp::Status busy;
  busy.set_message("overloaded");
  ScriptedReceiver rx({{400, bad.SerializeAsString()}, {503, busy.SerializeAsString(), "application/x-protobuf", "7"},
                       {401, "who are you", "text/plain"}});
  otlp::Transport t(config_for(rx));
  std::string body = logs_bytes();
  otlp::ExportAnswer a = t.send(otlp::Signal::Logs, {&body, 1});
  EXPECT_EQ(a.kind, otlp::AnswerKind::Rejected);
  EXPECT_NE(a.what.find("HTTP 400"), std::string::npos) << a.what;
  EXPECT_NE(a.what.find("attribute key too long"), std::string::npos) << a.what;
  a = t.send(otlp::Signal::Logs, {&body, 1});
  EXPECT_EQ(a.kind, otlp::AnswerKind::Retry);
  EXPECT_EQ(a.retry_after, 7.0);
  EXPECT_NE(a.what.find("overloaded"), std::string::npos) << a.what;
  a = t.send(otlp::Signal::Logs, {&body, 1});
  EXPECT_EQ(a.kind, otlp::AnswerKind::Refused);
  EXPECT_NE(a.what.find("who are you"), std::string::npos) << a.what;
}

TEST(OtlpTransport, ConnectionRefusedIsAnAnswerToRetry) {
  auto cfg = std::make_shared<otlp::TransportConfig>();
  cfg->logs_url = "http://127.0.0.1:1/v1/logs";
  otlp::Transport t(cfg);
  std::string body = logs_bytes();
  otlp::ExportAnswer a = t.send(otlp::Signal::Logs, {&body, 1});
  EXPECT_EQ(a.kind, otlp::AnswerKind::Retry);
  EXPECT_NE(a.what.find("127.0.0.1:1"), std::string::npos) << a.what;
}

TEST(OtlpTransport, PartialSuccessIsReadFromProtobufAndJson) {
  opentelemetry::proto::collector::logs::v1::ExportLogsServiceResponse resp;
  resp.mutable_partial_success()->set_rejected_log_records(1);
  resp.mutable_partial_success()->set_error_message("too old");
  ScriptedReceiver rx({{200, resp.SerializeAsString()}});
  otlp::Transport t(config_for(rx));
  std::string body = logs_bytes();
  otlp::ExportAnswer a = t.send(otlp::Signal::Logs, {&body, 1});
  EXPECT_EQ(a.kind, otlp::AnswerKind::Accepted);
  EXPECT_EQ(a.rejected_items, 1);
  EXPECT_EQ(a.partial_message, "too old");
  ScriptedReceiver json({{200, R"({"partialSuccess":{"rejectedLogRecords":"4","errorMessage":"dup"}})",
                          "application/json"}});
  otlp::Transport tj(config_for(json, otlp::Protocol::HttpJson));
  a = tj.send(otlp::Signal::Logs, {&body, 1});
  EXPECT_EQ(a.rejected_items, 4);
  EXPECT_EQ(a.partial_message, "dup");
}

TEST(OtlpTransport, JsonGzipAndHeaders) {
  ScriptedReceiver rx({{200, "{}", "application/json"}});
  auto cfg = std::make_shared<otlp::TransportConfig>(*config_for(rx, otlp::Protocol::HttpJson));
  cfg->gzip = true;
  cfg->headers = otlp::parse_headers_env("X-Tenant=team%20a, other=1");
  otlp::Transport t(cfg);
  std::vector<std::string> parts = {logs_bytes(), logs_bytes()};
  EXPECT_EQ(t.send(otlp::Signal::Logs, parts).kind, otlp::AnswerKind::Accepted);
  ASSERT_EQ(rx.bodies.size(), 1u);
  EXPECT_EQ(rx.paths[0], "/v1/logs");
  EXPECT_EQ(rx.content_types[0], "application/json");
  EXPECT_EQ(rx.custom_headers[0], "team a");
  EXPECT_EQ(rx.encodings[0], "gzip");
  auto j = nlohmann::json::parse(rx.bodies[0]);
  EXPECT_EQ(j["resourceLogs"].size(), 2u) << "both parts, as one JSON request";
}

// Bytes that are not a request of the signal cannot be turned into JSON: refused for good, never sent.
TEST(OtlpTransport, BytesThatAreNotARequestAreRejectedBeforeJson) {
  ScriptedReceiver rx({});
  otlp::Transport t(config_for(rx, otlp::Protocol::HttpJson));
  std::string junk = "\xff\xff\xff not protobuf";
  otlp::ExportAnswer a = t.send(otlp::Signal::Metrics, {&junk, 1});
  EXPECT_EQ(a.kind, otlp::AnswerKind::Rejected);
  EXPECT_TRUE(rx.bodies.empty());
}

TEST(OtlpTransport, GrpcTargets) {
  EXPECT_EQ(otlp::grpc_target_of("http://localhost:4317/"), std::make_pair(std::string("localhost:4317"), false));
  EXPECT_EQ(otlp::grpc_target_of("https://collector"), std::make_pair(std::string("collector:443"), true));
  EXPECT_EQ(otlp::grpc_target_of("10.0.0.1:4317"), std::make_pair(std::string("10.0.0.1:4317"), false));
}

// Nothing listens on the port: UNAVAILABLE, which OTLP retries, with the target in the message.
TEST(OtlpTransport, GrpcUnavailableIsAnAnswerToRetry) {
  setenv("GCM_OTLP_GRPC_MODULE", GCM_GRPC_MODULE, 1);
  auto cfg = std::make_shared<otlp::TransportConfig>();
  cfg->protocol = otlp::Protocol::Grpc;
  cfg->grpc_target = "127.0.0.1:1";
  cfg->timeout = std::chrono::seconds(2);
  otlp::Transport t(cfg);
  std::string body = logs_bytes();
  otlp::ExportAnswer a = t.send(otlp::Signal::Logs, {&body, 1});
  EXPECT_EQ(a.kind, otlp::AnswerKind::Retry);
  EXPECT_NE(a.what.find("127.0.0.1:1"), std::string::npos) << a.what;
  EXPECT_NE(a.what.find("UNAVAILABLE"), std::string::npos) << a.what;
}

TEST(OtlpTransport, SignalUrlsAndRetryAfter) {
  EXPECT_EQ(otlp::signal_url("http://h:4318", "v1/logs"), "http://h:4318/v1/logs");
  EXPECT_EQ(otlp::signal_url("http://h:4318/", "v1/logs"), "http://h:4318/v1/logs");
  otlp::TransportConfig c;
  c.set_endpoint("http://h:4318/");
  EXPECT_EQ(c.url(otlp::Signal::Metrics), "http://h:4318/v1/metrics");
  EXPECT_EQ(c.url(otlp::Signal::Traces), "http://h:4318/v1/traces");
  EXPECT_EQ(parse_retry_after("7"), 7.0);
  EXPECT_FALSE(parse_retry_after("soon").has_value());
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0);  // in the past
}

}  // namespace
}  // namespace gcm
