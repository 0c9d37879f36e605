// The OTLP exporter against a small receiver of the project's own that answers what each test scripts: retries on
// 503 and 429 (honouring Retry-After), fails fast on 400 with the receiver's message, partial success, gzip.
#include "otlp/exporter.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include "core/gzip.h"
#include "core/http_client.h"
#include "otlp/encode.h"
#include "status.pb.h"

namespace gcm {
namespace {

struct Answer {
  int status;
  std::string body;
  std::string content_type = "application/x-protobuf";
  std::string retry_after;
};

class ScriptedReceiver {
 public:
  explicit ScriptedReceiver(std::deque<Answer> answers) : answers_(std::move(answers)) {
    server_.Post(R"(/v1/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      // cpp-httplib inflates gzip bodies itself when built with zlib; inflate here only if it did not.
      bool gz = req.body.size() > 2 && req.body[0] == '\x1f' && req.body[1] == static_cast<char>(0x8b);
      bodies.push_back(gz ? inflate_bounded(req.body, SIZE_MAX) : req.body);
      encodings.push_back(req.get_header_value("Content-Encoding"));
      times.push_back(std::chrono::steady_clock::now());
      paths.push_back(req.path);
      content_types.push_back(req.get_header_value("Content-Type"));
      custom_headers.push_back(req.get_header_value("X-Tenant"));
      Answer a = answers_.empty() ? Answer{200, ""} : answers_.front();
      if (!answers_.empty()) answers_.pop_front();
      res.status = a.status;
      if (!a.retry_after.empty()) res.set_header("Retry-After", a.retry_after);
      res.set_content(a.body, a.content_type.c_str());
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~ScriptedReceiver() {
    server_.stop();
    thread_.join();
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

  std::vector<std::string> bodies, encodings, paths, content_types, custom_headers;
  std::vector<std::chrono::steady_clock::time_point> times;

 private:
  std::mutex mu_;
  std::deque<Answer> answers_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

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

otlp::ExporterConfig config_for(const ScriptedReceiver& rx, int retries) {
  otlp::ExporterConfig cfg;
  cfg.logs_url = rx.url("/v1/logs");
  cfg.metrics_url = rx.url("/v1/metrics");
  cfg.retry.retries = retries;
  cfg.retry.initial_backoff_s = 0.05;
  cfg.timeout = std::chrono::seconds(5);
  return cfg;
}

TEST(OtlpExporter, RetriesOn503And429HonouringRetryAfterThenSucceeds) {
  gcm::otlp::Status busy;
  busy.set_message("overloaded");
  ScriptedReceiver rx({{503, busy.SerializeAsString()}, {429, "", "text/plain", "1"}, {200, ""}});
  otlp::Exporter ex(config_for(rx, 3), nullptr);
  auto req = sample_logs();
  ex.send(otlp::Signal::Logs, req);
  ASSERT_EQ(rx.bodies.size(), 3u);
  for (const auto& b : rx.bodies) EXPECT_EQ(b, req.SerializeAsString());  // nothing lost, nothing changed
  EXPECT_EQ(rx.paths[0], "/v1/logs");
  EXPECT_EQ(rx.content_types[0], "application/x-protobuf");
  // Retry-After: 1 was honoured between the second and third attempt (the backoff alone would be 0.1 s).
  EXPECT_GE(rx.times[2] - rx.times[1], std::chrono::milliseconds(950));
  EXPECT_EQ(ex.stats().retries, 2u);
}

TEST(OtlpExporter, BadRequestFailsFastWithTheReceiversMessage) {
  gcm::otlp::Status bad;
  bad.set_code(3);
  bad.set_message("attribute key too long");
  ScriptedReceiver rx({{400, bad.SerializeAsString()}, {200, ""}});
  otlp::Exporter ex(config_for(rx, 3), nullptr);
  try {
    ex.send(otlp::Signal::Logs, sample_logs());
    FAIL();
  } catch (const otlp::ExportError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("HTTP 400"), std::string::npos) << msg;
    EXPECT_NE(msg.find("attribute key too long"), std::string::npos) << msg;
  }
  EXPECT_EQ(rx.bodies.size(), 1u);
}

TEST(OtlpExporter, GivesUpAfterTheRetriesAndSaysSo) {
  ScriptedReceiver rx({{503, "a"}, {503, "b"}, {503, "c"}, {200, ""}});
  otlp::Exporter ex(config_for(rx, 2), nullptr);
  try {
    ex.send(otlp::Signal::Logs, sample_logs());
    FAIL();
  } catch (const otlp::ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("gave up after 2 retries"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rx.bodies.size(), 3u);
}

TEST(OtlpExporter, ConnectionRefusedIsRetriedThenReported) {
  otlp::ExporterConfig cfg;
  cfg.logs_url = "http://127.0.0.1:1/v1/logs";
  cfg.retry.retries = 1;
  cfg.retry.initial_backoff_s = 0.01;
  otlp::Exporter ex(cfg, nullptr);
  EXPECT_THROW(ex.send(otlp::Signal::Logs, sample_logs()), otlp::ExportError);
}

TEST(OtlpExporter, PartialSuccessIsCountedNotRetried) {
  opentelemetry::proto::collector::logs::v1::ExportLogsServiceResponse resp;
  resp.mutable_partial_success()->set_rejected_log_records(1);
  resp.mutable_partial_success()->set_error_message("too old");
  ScriptedReceiver rx({{200, resp.SerializeAsString()}});
  otlp::Exporter ex(config_for(rx, 2), nullptr);
  ex.send(otlp::Signal::Logs, sample_logs());
  EXPECT_EQ(ex.stats().rejected, 1u);
  EXPECT_EQ(rx.bodies.size(), 1u);
}

TEST(OtlpExporter, JsonGzipAndHeaders) {
  ScriptedReceiver rx({{200, "{}", "application/json"}});
  auto cfg = config_for(rx, 0);
  cfg.protocol = otlp::Protocol::HttpJson;
  cfg.gzip = true;
  cfg.headers = otlp::parse_headers_env("X-Tenant=team%20a, other=1");
  otlp::Exporter ex(cfg, nullptr);
  ex.send(otlp::Signal::Metrics, sample_logs());
  ASSERT_EQ(rx.bodies.size(), 1u);
  EXPECT_EQ(rx.paths[0], "/v1/metrics");
  EXPECT_EQ(rx.content_types[0], "application/json");
  EXPECT_EQ(rx.custom_headers[0], "team a");
  EXPECT_EQ(rx.encodings[0], "gzip");
  EXPECT_NE(rx.bodies[0].find("\"resourceLogs\""), std::string::npos);
}

TEST(OtlpExporter, GrpcTargets) {
  EXPECT_EQ(otlp::grpc_target_of("http://localhost:4317/"), std::make_pair(std::string("localhost:4317"), false));
  EXPECT_EQ(otlp::grpc_target_of("https://collector"), std::make_pair(std::string("collector:443"), true));
  EXPECT_EQ(otlp::grpc_target_of("10.0.0.1:4317"), std::make_pair(std::string("10.0.0.1:4317"), false));
}

// Nothing listens on the port: UNAVAILABLE is retryable, so it is retried, then reported with the target.
TEST(OtlpExporter, GrpcUnavailableIsRetriedThenReported) {
  setenv("GCM_OTLP_GRPC_MODULE", GCM_GRPC_MODULE, 1);
  otlp::ExporterConfig cfg;
  cfg.protocol = otlp::Protocol::Grpc;
  cfg.grpc_target = "127.0.0.1:1";
  cfg.retry.retries = 1;
  cfg.retry.initial_backoff_s = 0.01;
  cfg.timeout = std::chrono::seconds(2);
  otlp::Exporter ex(cfg, nullptr);
  try {
    ex.send(otlp::Signal::Logs, sample_logs());
    FAIL();
  } catch (const otlp::ExportError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("127.0.0.1:1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("UNAVAILABLE"), std::string::npos) << msg;
    EXPECT_NE(msg.find("gave up after 1 retry"), std::string::npos) << msg;
  }
  EXPECT_EQ(ex.stats().retries, 1u);
}

TEST(OtlpExporter, SignalUrlAndRetryAfter) {
  EXPECT_EQ(otlp::signal_url("http://h:4318", "v1/logs"), "http://h:4318/v1/logs");
  EXPECT_EQ(otlp::signal_url("http://h:4318/", "v1/logs"), "http://h:4318/v1/logs");
  EXPECT_EQ(parse_retry_after("7"), 7.0);
  EXPECT_FALSE(parse_retry_after("soon").has_value());
  EXPECT_EQ(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), 0.0);  // in the past
}

}  // namespace
}  // namespace gcm
