// The webhook sink against a receiver of the project's own HTTP listener, plain and TLS: each chunk one JSON
// array, the token, retries through the common policy, Retry-After, final answers, timeouts, bad options.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/web_config.h"
#include "refused_port.h"
#include "tls_certs.h"
#include "sinks/sink.h"
#include "sink_fixtures.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using namespace std::chrono_literals;
using namespace gcm::sink_testing;
using gcm::testing::slurp;
using gcm::testing::TempDir;

class WebhookTls : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = testing::make_test_pki(dir_.path());
    std::ofstream(dir_.file("web.yml")) << "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";
    HttpListenerOptions o;
    apply_web_config(o, load_web_config(dir_.file("web.yml")));
    rx_ = std::make_unique<Receiver>(std::deque<Answer>{}, o.tls);
  }
  TempDir dir_;  // declared first: removed after the receiver that serves its certificates
  testing::TestPki pki_;
  std::unique_ptr<Receiver> rx_;
};

TEST(WebhookSink, PostsEachChunkAsOneJsonArrayInTheStdoutForm) {
  Receiver rx;
  auto sink = make_sink("webhook", {"url=" + rx.url(), "bearer_token=t0ken"}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 7), rec(log_schema(), "c2", 8, {})});
  send(*sink, {rec(metric_schema(), "c1", 9)});
  auto reqs = rx.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].path, "/hook");
  EXPECT_EQ(reqs[0].header("content-type"), "application/json");
  EXPECT_EQ(reqs[0].header("authorization"), "Bearer t0ken");
  // LOG: null fields dropped, nested objects kept; Python's json.dumps separators and \u escapes (GCM's body).
  EXPECT_EQ(reqs[0].body,
            "[{\"cluster\": \"c1\", \"value\": 7, \"extra\": {\"k\": \"v\\u00e9\"}}, "
            "{\"cluster\": \"c2\", \"value\": 8, \"extra\": {}}]");
  // METRIC: flattened.
  EXPECT_EQ(reqs[1].body, "[{\"cluster\": \"c1\", \"value\": 9, \"extra.k\": \"v\\u00e9\"}]");
}

TEST(WebhookSink, NoTokenNoAuthorizationHeader) {
  Receiver rx;
  auto sink = make_sink("webhook", {"url=" + rx.url()}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1)});
  ASSERT_EQ(rx.requests().size(), 1u);
  EXPECT_EQ(rx.requests()[0].header("authorization"), "");
}

TEST(WebhookSink, TokenFromAFileFirstLineOnly) {
  TempDir dir;
  std::ofstream(dir.file("token")) << "s3cret\nsecond line\n";
  Receiver rx;
  auto sink = make_sink("webhook", {"url=" + rx.url(), "bearer_token_file=" + dir.file("token")}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1)});
  ASSERT_EQ(rx.requests().size(), 1u);
  EXPECT_EQ(rx.requests()[0].header("authorization"), "Bearer s3cret");
}

TEST(WebhookSink, RetryableAnswersAreRetriedThroughTheCommonPolicy) {
  Receiver rx({{503, "busy"}, {502, ""}, {200, ""}});
  auto sink = make_sink("webhook", {"url=" + rx.url()}, quick_retries(2));
  send(*sink, {rec(log_schema(), "c1", 1)});
  auto reqs = rx.requests();
  ASSERT_EQ(reqs.size(), 3u);
  for (const auto& r : reqs) EXPECT_EQ(r.body, reqs[0].body) << "the same chunk, unchanged, each time";
}

TEST(WebhookSink, RetryAfterIsHonoured) {
  Receiver rx({{429, "slow down", "1"}, {200, ""}});
  auto sink = make_sink("webhook", {"url=" + rx.url()}, quick_retries(1));
  send(*sink, {rec(log_schema(), "c1", 1)});
  auto t = rx.times();
  ASSERT_EQ(t.size(), 2u);
  EXPECT_GE(t[1] - t[0], 950ms) << "the backoff alone would be 10 ms";
}

TEST(WebhookSink, AFinalAnswerFailsAtOnceWithTheStatusAndTheReceiversMessage) {
  Receiver rx({{401, "token expired\n"}});
  auto sink = make_sink("webhook", {"url=" + rx.url(), "bearer_token=old"}, quick_retries(3));
  std::string err = sink_error([&] { send(*sink, {rec(log_schema(), "c1", 1)}); });
  EXPECT_NE(err.find("answered HTTP 401: token expired"), std::string::npos) << err;
  EXPECT_EQ(err.find("old"), std::string::npos) << "the token never appears in a message: " << err;
  EXPECT_EQ(rx.requests().size(), 1u) << "401 is not retried";
  // The failed chunk is not resent with the next one.
  send(*sink, {rec(log_schema(), "c2", 2)});
  auto reqs = rx.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1].body.find("c1"), std::string::npos) << reqs[1].body;
}

TEST(WebhookSink, GivesUpAfterTheRetriesAndSaysSo) {
  Receiver rx({{503, ""}, {503, ""}, {503, ""}});
  auto sink = make_sink("webhook", {"url=" + rx.url()}, quick_retries(1));
  std::string err = sink_error([&] { send(*sink, {rec(log_schema(), "c1", 1)}); });
  EXPECT_NE(err.find("answered HTTP 503"), std::string::npos) << err;
  EXPECT_NE(err.find("gave up after 1 retry"), std::string::npos) << err;
  EXPECT_EQ(rx.requests().size(), 2u);
}

TEST(WebhookSink, ConnectionRefusedIsRetriedThenReportedWithoutTheUrlsSecret) {
  gcm::testing::RefusedPort refused;
  int port = refused.port();
  auto sink = make_sink("webhook", {"url=http://127.0.0.1:" + std::to_string(port) + "/services/T0/B0/XSECRETX"},
                        quick_retries(1));
  std::string err = sink_error([&] { send(*sink, {rec(log_schema(), "c1", 1)}); });
  EXPECT_NE(err.find("gave up after 1 retry"), std::string::npos) << err;
  EXPECT_NE(err.find("http://127.0.0.1:" + std::to_string(port) + "/..."), std::string::npos) << err;
  EXPECT_EQ(err.find("XSECRETX"), std::string::npos) << "webhook URLs carry secrets in their path: " << err;
}

TEST(WebhookSink, TimeoutIsPerPost) {
  // A receiver that holds the request longer than the sink's timeout: the POST fails in about that time.
  HttpListenerOptions o;
  o.workers = 1;
  HttpListener slow(o, [](const HttpRequest&) {
    std::this_thread::sleep_for(1500ms);
    return HttpReply{200, "text/plain", "", ""};
  });
  slow.start();
  auto sink = make_sink("webhook", {"url=http://127.0.0.1:" + std::to_string(slow.port()) + "/", "timeout=0.3"},
                        quick_retries(0));
  auto t0 = std::chrono::steady_clock::now();
  std::string err = sink_error([&] { send(*sink, {rec(log_schema(), "c1", 1)}); });
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1200ms) << err;
  EXPECT_NE(err.find("gave up after 0 retries"), std::string::npos) << err;
  slow.stop();
}

TEST(WebhookSink, BadOptionsAreUsageErrorsNamingThem) {
  EXPECT_NE(usage_error("webhook", {}).find("needs -o url="), std::string::npos);
  EXPECT_NE(usage_error("webhook", {"url=file:///etc/passwd"}).find("only http:// and https://"), std::string::npos)
      << usage_error("webhook", {"url=file:///etc/passwd"});
  EXPECT_NE(usage_error("webhook", {"url=http://h/", "timeout=0"}).find("timeout must be more than 0"),
            std::string::npos);
  EXPECT_NE(usage_error("webhook", {"url=http://h/", "bearer_token=a\nX-Evil: 1"}).find("control character"),
            std::string::npos);
  EXPECT_NE(usage_error("webhook", {"url=http://h/", "bearer_token=a", "bearer_token_file=/x"}).find("not both"),
            std::string::npos);
  EXPECT_NE(usage_error("webhook", {"url=http://h/", "bearer_token_file=/nonexistent/token"})
                .find("cannot read bearer_token_file '/nonexistent/token'"),
            std::string::npos);
  EXPECT_NE(usage_error("webhook", {"url=http://h/", "verify_ssl=maybe"}).find("'verify_ssl' must be true or false"),
            std::string::npos)
      << usage_error("webhook", {"url=http://h/", "verify_ssl=maybe"});
  EXPECT_NE(usage_error("webhook", {"url=http://h/", "endpoint=x"}).find("does not accept option endpoint"),
            std::string::npos);
}

TEST_F(WebhookTls, APrivateCaVerifiesTheServer) {
  auto sink = make_sink("webhook", {"url=" + rx_->url(), "ca_file=" + pki_.ca_crt}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1)});
  EXPECT_EQ(rx_->requests().size(), 1u);
}

TEST_F(WebhookTls, AnUnknownCertificateIsRefusedByDefault) {
  auto sink = make_sink("webhook", {"url=" + rx_->url()}, quick_retries(0));  // the system's CAs only
  std::string err = sink_error([&] { send(*sink, {rec(log_schema(), "c1", 1)}); });
  EXPECT_NE(err.find("certificate"), std::string::npos) << err;
  EXPECT_EQ(rx_->requests().size(), 0u);
  // ... and by a CA that did not sign it.
  auto other = make_sink("webhook", {"url=" + rx_->url(), "ca_file=" + pki_.other_ca_crt}, quick_retries(0));
  EXPECT_NE(sink_error([&] { send(*other, {rec(log_schema(), "c1", 1)}); }).find("certificate"), std::string::npos);
  EXPECT_EQ(rx_->requests().size(), 0u);
}

TEST_F(WebhookTls, VerifySslFalseAcceptsIt) {
  auto sink = make_sink("webhook", {"url=" + rx_->url(), "verify_ssl=false"}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1)});
  EXPECT_EQ(rx_->requests().size(), 1u);
  EXPECT_NE(usage_error("webhook", {"url=" + rx_->url(), "verify_ssl=false", "ca_file=" + pki_.ca_crt})
                .find("no effect with verify_ssl=false"),
            std::string::npos);
}

}  // namespace
}  // namespace gcm
