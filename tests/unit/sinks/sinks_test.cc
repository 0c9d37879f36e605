// The webhook, telemetry and file (format=csv) sinks, and the shutdown guarantee of make_sink(): the webhook against
// a receiver of the project's own HTTP listener (plain and TLS), the file formats read back byte for byte.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/http_listener.h"
#include "core/shutdown.h"
#include "core/web_config.h"
#include "sinks/csv_table.h"
#include "sinks/rotating_file.h"
#include "sinks/sink.h"
#include "tls_certs.h"
#include "fixture_records.h"
#include "refused_port.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using namespace std::chrono_literals;

using gcm::testing::slurp;
using gcm::testing::TempDir;

const Schema& log_schema() {
  static const Schema s = make_schema("TestLog", "a test record", "test", DataType::Log,
                                      {{"cluster", FieldType::String, FieldRole::Identity},
                                       {"value", FieldType::Int, FieldRole::Gauge},
                                       {"extra", FieldType::Object},
                                       {"gone", FieldType::String}});
  return s;
}

const Schema& metric_schema() {
  static const Schema s = make_schema("TestMetric", "a test metric", "test", DataType::Metric,
                                      {{"cluster", FieldType::String, FieldRole::Identity},
                                       {"value", FieldType::Int, FieldRole::Gauge},
                                       {"extra", FieldType::Object},
                                       {"gone", FieldType::String}});
  return s;
}

// A second record type with other columns (as Statvfs and PureInfo share storage's file_path).
const Schema& other_schema() {
  static const Schema s = make_schema("TestOther", "another record", "other", DataType::Log,
                                      {{"cluster", FieldType::String}, {"user", FieldType::Int}});
  return s;
}

Record rec(const Schema& s, const std::string& cluster, int64_t value, Object extra = {{"k", Value("v\xc3\xa9")}}) {
  Record r(s);
  r[0] = cluster;
  r[1] = value;
  r[2] = Value(std::move(extra));
  return r;  // "gone" stays null
}

// One round of one chunk, as the collection loop sends it.
void send(Sink& sink, const std::vector<Record>& records) {
  BatchInfo info;
  info.ts = 1700000000;
  info.schema = records.at(0).schema;
  info.data_type = info.schema->data_type;
  info.identifier = info.schema->identifier;
  sink.begin_round(info);
  sink.begin_chunk(info);
  for (const auto& r : records) sink.write(r);
  sink.end_chunk();
  sink.end_round(info);
}

SinkContext quick_retries(int retries) {
  SinkContext ctx;
  ctx.command = "test";
  ctx.retry.retries = retries;
  ctx.retry.initial_backoff_s = 0.01;
  return ctx;
}

struct Answer {
  int status = 200;
  std::string body;
  std::string retry_after;
};

// An HTTP receiver on the project's listener that records every request and answers what the test scripts
// (200 once the script is used up).
class Receiver {
 public:
  explicit Receiver(std::deque<Answer> answers = {}, std::shared_ptr<const TlsServerContext> tls = nullptr)
      : answers_(std::move(answers)) {
    HttpListenerOptions o;
    o.workers = 1;
    o.tls = std::move(tls);
    scheme_ = o.tls ? "https" : "http";
    server_ = std::make_unique<HttpListener>(o, [this](const HttpRequest& req) {
      std::lock_guard lock(mu_);
      requests_.push_back(req);
      times_.push_back(std::chrono::steady_clock::now());
      Answer a;
      if (!answers_.empty()) {
        a = answers_.front();
        answers_.pop_front();
      }
      HttpReply reply{a.status, "text/plain", a.body, ""};
      if (!a.retry_after.empty()) reply.extra_headers = "Retry-After: " + a.retry_after + "\r\n";
      return reply;
    });
    server_->start();
  }
  ~Receiver() { server_->stop(); }
  std::string url(const std::string& path = "/hook") const {
    return scheme_ + "://127.0.0.1:" + std::to_string(server_->port()) + path;
  }
  std::vector<HttpRequest> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  std::vector<std::chrono::steady_clock::time_point> times() {
    std::lock_guard lock(mu_);
    return times_;
  }

 private:
  std::mutex mu_;
  std::deque<Answer> answers_;
  std::vector<HttpRequest> requests_;
  std::vector<std::chrono::steady_clock::time_point> times_;
  std::string scheme_;
  std::unique_ptr<HttpListener> server_;
};

std::string sink_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const SinkError& e) {
    return e.what();
  }
  return "(no SinkError)";
}

std::string usage_error(const std::string& sink, const std::vector<std::string>& opts) {
  try {
    make_sink(sink, opts, quick_retries(0));
  } catch (const SinkUsageError& e) {
    return e.what();
  }
  return "(no SinkUsageError)";
}

// ---------------------------------------------------------------------------------------------------- webhook

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

// The exporter fails with its own error type (otlp/ knows nothing of sinks); the otel sink reports it as the
// SinkError every other sink throws, which the loop counts as a sink failure.
TEST(OtelSink, AnExportFailureIsASinkError) {
  gcm::testing::RefusedPort refused;
  int port = refused.port();
  auto sink =
      make_sink("otel", {"otel_endpoint=http://127.0.0.1:" + std::to_string(port), "otel_timeout=2"}, quick_retries(0));
  std::string err = sink_error([&] { send(*sink, {rec(log_schema(), "c1", 1)}); });
  EXPECT_NE(err.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << err;
  EXPECT_NE(err, "(no SinkError)");
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

// ---------------------------------------------------------------------------------------------------- shutdown

// A sink that counts what it is asked, registered in the test binary only.
struct Calls {
  int writes = 0, flushes = 0, shutdowns = 0;
};
Calls g_calls;
class CountingSink : public Sink {
 public:
  void write(const Record&) override { ++g_calls.writes; }
  void flush() override { ++g_calls.flushes; }
  void shutdown() override {
    ++g_calls.shutdowns;
    if (fail_) throw SinkError("the receiver is gone");
  }
  bool fail_ = false;
};
const bool kCountingRegistered = register_sink({
    "test_counting",
    "counts calls (unit tests)",
    {{"fail", "bool", "shutdown fails", ""}},
    [](const SinkOptions& o, const SinkContext&) {
      auto s = std::make_unique<CountingSink>();
      s->fail_ = o.get_bool("fail", false);
      return s;
    },
});

TEST(SinkShutdown, ASinkNobodyShutsDownIsShutDownWhenDestroyed) {
  g_calls = {};
  {
    auto sink = make_sink("test_counting", {}, quick_retries(0));
    send(*sink, {rec(log_schema(), "c1", 1)});
  }  // the owner left without a word (an exception, a forgotten call)
  EXPECT_EQ(g_calls.shutdowns, 1);
}

TEST(SinkShutdown, ExactlyOnceAndNothingIsWrittenAfterIt) {
  g_calls = {};
  {
    auto sink = make_sink("test_counting", {}, quick_retries(0));
    sink->flush();
    sink->shutdown();
    sink->shutdown();
    std::string err = sink_error([&] { send(*sink, {rec(log_schema(), "c1", 1)}); });
    EXPECT_NE(err.find("sink 'test_counting' was already shut down"), std::string::npos) << err;
  }
  EXPECT_EQ(g_calls.shutdowns, 1);
  EXPECT_EQ(g_calls.flushes, 1);
  EXPECT_EQ(g_calls.writes, 0);
}

TEST(SinkShutdown, AFailureReachesAnExplicitCallerAndIsNotRetriedAtDestruction) {
  g_calls = {};
  {
    auto sink = make_sink("test_counting", {"fail=true"}, quick_retries(0));
    EXPECT_NE(sink_error([&] { sink->shutdown(); }).find("the receiver is gone"), std::string::npos);
  }
  EXPECT_EQ(g_calls.shutdowns, 1);
}

TEST(SinkShutdown, AWebhookChunkLeftOpenIsDeliveredAtExit) {
  Receiver rx;
  {
    auto sink = make_sink("webhook", {"url=" + rx.url()}, quick_retries(0));
    BatchInfo info;
    info.schema = &log_schema();
    sink->begin_round(info);
    sink->begin_chunk(info);
    sink->write(rec(log_schema(), "c1", 1));
    // no end_chunk: the round was cut short
  }
  auto reqs = rx.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_NE(reqs[0].body.find("\"c1\""), std::string::npos) << reqs[0].body;
}

// ---------------------------------------------------------------------------------------------------- CSV

TEST(Csv, CellsAreWrittenAsPythonsCsvModuleWritesThem) {
  EXPECT_EQ(csv_cell(Value()), "");
  EXPECT_EQ(csv_cell(Value(true)), "True");
  EXPECT_EQ(csv_cell(Value(false)), "False");
  EXPECT_EQ(csv_cell(Value(-12)), "-12");
  EXPECT_EQ(csv_cell(Value(1.0)), "1.0");
  EXPECT_EQ(csv_cell(Value(0.1)), "0.1");
  EXPECT_EQ(csv_cell(Value(1e20)), "1e+20");
  EXPECT_EQ(csv_cell(Value("a\xff")), "a\xef\xbf\xbd") << "invalid UTF-8 replaced";
  EXPECT_EQ(csv_cell(Value(List{Value(1), Value("x")})), "[1,\"x\"]");
  EXPECT_EQ(csv_record({"plain", "with,comma", "with \"quote\"", "two\nlines", ""}),
            "plain,\"with,comma\",\"with \"\"quote\"\"\",\"two\nlines\",\r\n");
  EXPECT_EQ(csv_record({""}), "\"\"\r\n") << "a lone empty field is not a blank line";
  bool ok = false;
  EXPECT_EQ(parse_csv_record("a,\"b,c\",\"d\"\"e\",", ok), (std::vector<std::string>{"a", "b,c", "d\"e", ""}));
  EXPECT_TRUE(ok);
  parse_csv_record("a,\"b", ok);
  EXPECT_FALSE(ok);
}

class CsvFiles : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return dir_.file(name); }
  TempDir dir_;
};

TEST_F(CsvFiles, FileSinkFlattensAndSortsTheColumnUnionOfTheBatch) {
  auto sink = make_sink("file", {"file_path=" + path("out.csv"), "format=csv"}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 7, {{"k", Value("x,y")}, {"n", Value(Object{{"deep", Value(1.5)}})}}),
               rec(log_schema(), "c2", 8, {{"other", Value(List{Value(true), Value(false)})}})});
  sink->shutdown();
  // Header: the flattened keys of both records plus the schema's scalar fields ("gone" is null everywhere), sorted.
  EXPECT_EQ(slurp(path("out.csv")),
            "cluster,extra.k,extra.n.deep,extra.other.0,extra.other.1,gone,value\r\n"
            "c1,\"x,y\",1.5,,,,7\r\n"
            "c2,,,True,False,,8\r\n");
}

TEST_F(CsvFiles, TheHeaderIsWrittenOncePerFileAcrossBatchesAndRestarts) {
  for (int run = 0; run < 2; ++run) {  // a second process appending to the file of the first
    auto sink = make_sink("file", {"file_path=" + path("out.csv"), "format=csv"}, quick_retries(0));
    send(*sink, {rec(log_schema(), "r" + std::to_string(run), 1)});
    send(*sink, {rec(log_schema(), "s" + std::to_string(run), 2)});
  }
  EXPECT_EQ(
      slurp(path("out.csv")),
      "cluster,extra.k,gone,value\r\nr0,v\xc3\xa9,,1\r\ns0,v\xc3\xa9,,2\r\nr1,v\xc3\xa9,,1\r\ns1,v\xc3\xa9,,2\r\n");
}

TEST_F(CsvFiles, ABatchWithFewerColumnsGoesUnderTheHeaderInItsOrder) {
  auto sink = make_sink("file", {"file_path=" + path("out.csv"), "format=csv"}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1)});
  send(*sink, {rec(log_schema(), "c2", 2, {})});  // no extra.k in this batch
  EXPECT_EQ(slurp(path("out.csv")), "cluster,extra.k,gone,value\r\nc1,v\xc3\xa9,,1\r\nc2,,,2\r\n");
}

TEST_F(CsvFiles, NewColumnsStartANewFileWithTheUnionSoEveryFileIsOneTable) {
  auto sink = make_sink("file", {"file_path=" + path("out.csv"), "format=csv"}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1, {})});
  Record o(other_schema());
  o[0] = "c2";
  o[1] = 1000;
  send(*sink, {o});                               // another record type: a "user" column
  send(*sink, {rec(log_schema(), "c3", 3, {})});  // the first type again: fits the union
  send(*sink, {o});
  EXPECT_EQ(slurp(path("out.csv.1")), "cluster,gone,value\r\nc1,,1\r\n");
  EXPECT_EQ(slurp(path("out.csv")), "cluster,gone,user,value\r\nc2,,1000,\r\nc3,,,3\r\nc2,,1000,\r\n");
  EXPECT_FALSE(std::filesystem::exists(path("out.csv.2"))) << "one rotation, then the union fits both";
}

TEST_F(CsvFiles, SizeRotationStartsEveryFileWithTheHeader) {
  auto sink = make_sink("file", {"file_path=" + path("out.csv"), "format=csv", "max_bytes=60"}, quick_retries(0));
  // A 20-byte header and 14-byte rows: two rows per file.
  for (int i = 0; i < 6; ++i) send(*sink, {rec(log_schema(), "cluster-" + std::to_string(i), i, {})});
  EXPECT_EQ(slurp(path("out.csv.2")), "cluster,gone,value\r\ncluster-0,,0\r\ncluster-1,,1\r\n");
  EXPECT_EQ(slurp(path("out.csv.1")), "cluster,gone,value\r\ncluster-2,,2\r\ncluster-3,,3\r\n");
  EXPECT_EQ(slurp(path("out.csv")), "cluster,gone,value\r\ncluster-4,,4\r\ncluster-5,,5\r\n");
}

TEST_F(CsvFiles, JsonStaysTheDefaultAndAnUnknownFormatIsAUsageError) {
  auto sink = make_sink("file", {"file_path=" + path("out.jsonl")}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 7)});
  EXPECT_EQ(slurp(path("out.jsonl")), "{\"cluster\":\"c1\",\"value\":7,\"extra\":{\"k\":\"v\xc3\xa9\"}}\n");
  EXPECT_NE(usage_error("file", {"file_path=" + path("x"), "format=xml"}).find("format 'xml' is not one of json, csv"),
            std::string::npos);
}

TEST_F(CsvFiles, FileSinkRoutesCsvByIdentifierToo) {
  static const Schema job = [] {
    Schema s = make_schema("Job", "", "job", DataType::Log, {{"JOBID", FieldType::String}});
    s.identifier = DataIdentifier::Job;
    return s;
  }();
  auto sink = make_sink("file", {"job_file_path=" + path("jobs.csv"), "file_path=" + path("rest.csv"), "format=csv"},
                        quick_retries(0));
  Record j(job);
  j[0] = "42";
  send(*sink, {j});
  send(*sink, {rec(log_schema(), "c1", 1, {})});
  EXPECT_EQ(slurp(path("jobs.csv")), "JOBID\r\n42\r\n");
  EXPECT_EQ(slurp(path("rest.csv")), "cluster,gone,value\r\nc1,,1\r\n");
}

TEST_F(CsvFiles, TelemetryCsvHasTheSchemasFieldsInOrderAndOneHeader) {
  for (int run = 0; run < 2; ++run) {
    auto sink = make_sink("telemetry", {"file_path=" + path("sub/t.csv"), "format=csv"}, quick_retries(0));
    send(*sink, {rec(log_schema(), "c" + std::to_string(run), run)});
  }
  // Every field, nulls as empty cells, nested values as JSON: GCM's asdict() rows.
  EXPECT_EQ(slurp(path("sub/t.csv")),
            "cluster,value,extra,gone\r\n"
            "c0,0,\"{\"\"k\"\":\"\"v\xc3\xa9\"\"}\",\r\n"
            "c1,1,\"{\"\"k\"\":\"\"v\xc3\xa9\"\"}\",\r\n");
}

TEST_F(CsvFiles, TelemetryCsvWithAnotherRecordTypeAppendsItsColumns) {
  auto sink = make_sink("telemetry", {"file_path=" + path("t.csv"), "format=csv"}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1, {})});
  Record o(other_schema());
  o[0] = "c2";
  o[1] = 5;
  send(*sink, {o});
  EXPECT_EQ(slurp(path("t.csv.1")), "cluster,value,extra,gone\r\nc1,1,{},\r\n");
  EXPECT_EQ(slurp(path("t.csv")), "cluster,value,extra,gone,user\r\nc2,,,,5\r\n");
}

TEST_F(CsvFiles, TelemetryJsonIsNdjsonWithEveryField) {
  auto sink = make_sink("telemetry", {"file_path=" + path("t.jsonl")}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1), rec(metric_schema(), "c2", 2, {})});
  EXPECT_EQ(slurp(path("t.jsonl")),
            "{\"cluster\": \"c1\", \"value\": 1, \"extra\": {\"k\": \"v\\u00e9\"}, \"gone\": null}\n"
            "{\"cluster\": \"c2\", \"value\": 2, \"extra\": {}, \"gone\": null}\n");
  EXPECT_NE(usage_error("telemetry", {}).find("needs -o file_path=PATH"), std::string::npos);
  EXPECT_NE(usage_error("telemetry", {"file_path=" + path("x"), "format=parquet"})
                .find("Unsupported format 'parquet'. Choose from: json, csv"),
            std::string::npos);
}

TEST_F(CsvFiles, WithoutBackupsANewHeaderIsRefusedRatherThanTheFileDestroyed) {
  auto sink = make_sink("telemetry", {"file_path=" + path("t.csv"), "format=csv", "backup_count=0"}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1, {})});
  Record o(other_schema());
  o[0] = "c2";
  o[1] = 5;
  std::string err = sink_error([&] { send(*sink, {o}); });
  EXPECT_NE(err.find("backup_count=0 would destroy the current one"), std::string::npos) << err;
  EXPECT_EQ(slurp(path("t.csv")), "cluster,value,extra,gone\r\nc1,1,{},\r\n");
}

TEST_F(CsvFiles, AFileThatDoesNotStartWithAHeaderIsLeftAloneAndANewOneStarted) {
  std::ofstream(path("t.csv")) << "\"broken\n";
  CsvFile f(path("t.csv"), 0, 1, CsvColumnOrder::Sorted, nullptr);
  f.append({"b", "a"}, {{"2", "1"}});
  EXPECT_EQ(slurp(path("t.csv.1")), "\"broken\n");
  EXPECT_EQ(slurp(path("t.csv")), "a,b\r\n1,2\r\n");
}

}  // namespace
}  // namespace gcm
