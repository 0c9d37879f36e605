// The webhook, telemetry and file CSV sinks from the command line: gcm storage and health_checks writing to a
// local HTTP receiver (the project's listener) and to files, as an operator would configure them.
#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>

#include "core/http_listener.h"
#include "helpers.h"

namespace gcm::testing {
namespace {

using namespace std::chrono_literals;

class Receiver {
 public:
  explicit Receiver(int status = 200) {
    HttpListenerOptions o;
    o.workers = 1;
    server_ = std::make_unique<HttpListener>(o, [this, status](const HttpRequest& req) {
      std::lock_guard lock(mu_);
      requests_.push_back(req);
      return HttpReply{status, "text/plain", status == 200 ? "" : "no thanks", ""};
    });
    server_->start();
  }
  ~Receiver() { server_->stop(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/ingest"; }
  std::vector<HttpRequest> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }

 private:
  std::mutex mu_;
  std::vector<HttpRequest> requests_;
  std::unique_ptr<HttpListener> server_;
};

// storage's PURE records from a usage file: no host mounts involved, the same records on every machine.
struct Usage {
  std::string dir = temp_dir("sinks");
  Usage() {
    std::ofstream(dir + "/usage.jsonl") << "{\"user\": 0, \"used\": 1024, \"sample_time\": 1700000000, "
                                           "\"directory\": \"/a\"}\n"
                                        << "{\"user\": 0, \"used\": 7, \"sample_time\": 1700000001, "
                                           "\"directory\": \"/b,c\"}\n";
  }
  ~Usage() { std::filesystem::remove_all(dir); }
  CommandResult storage(std::vector<std::string> sink_args) {
    std::vector<std::string> args = {
        "storage", "--once", "--cluster", "c", "--pure-json-file-path", dir + "/usage.jsonl", "--log-folder", dir};
    args.insert(args.end(), sink_args.begin(), sink_args.end());
    return run_gcm(args, 60s);
  }
};

TEST(Sinks, WebhookPostsWhatStdoutPrints) {
  Usage u;
  Receiver rx;
  auto out = u.storage({"--sink", "stdout"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  auto r = u.storage({"--sink", "webhook", "-o", "url=" + rx.url(), "-o", "bearer_token=abc", "-o", "timeout=5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto reqs = rx.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].path, "/ingest");
  EXPECT_EQ(reqs[0].header("authorization"), "Bearer abc");
  EXPECT_EQ(reqs[0].body + "\n", out.out) << "one chunk: the array stdout prints, POSTed";
}

TEST(Sinks, WebhookFailureExitsOneNamingTheAnswer) {
  Usage u;
  Receiver rx(403);
  auto r = u.storage({"--sink", "webhook", "-o", "url=" + rx.url(), "--retries", "2", "--retry-backoff", "0.01"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("answered HTTP 403: no thanks"), std::string::npos) << r.err;
  EXPECT_EQ(rx.requests().size(), 1u) << "403 is final: not retried";
  auto usage = u.storage({"--sink", "webhook"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("needs -o url="), std::string::npos) << usage.err;
}

TEST(Sinks, FileCsvAndTelemetryCsvFromTheCommandLine) {
  Usage u;
  std::string csv = u.dir + "/out/pure.csv", tele = u.dir + "/out/tele.csv";
  for (int run = 0; run < 2; ++run) {
    auto f = u.storage({"--sink", "file", "-o", "file_path=" + csv, "-o", "format=csv"});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    auto t = u.storage({"--sink", "telemetry", "-o", "file_path=" + tele, "-o", "format=csv"});
    ASSERT_EQ(t.exit_code, 0) << t.err;
  }
  // PureInfo: cluster, user, used_bytes, sample_time, directory, username. The file sink sorts the columns; the
  // telemetry sink keeps the schema's order. Two runs, one header.
  std::string rows_sorted = "c,/a,1700000000,1024,0,root\r\nc,\"/b,c\",1700000001,7,0,root\r\n";
  EXPECT_EQ(read_text(csv), "cluster,directory,sample_time,used_bytes,user,username\r\n" + rows_sorted + rows_sorted)
      << read_text(csv);
  std::string rows = "c,0,1024,1700000000,/a,root\r\nc,0,7,1700000001,\"/b,c\",root\r\n";
  EXPECT_EQ(read_text(tele), "cluster,user,used_bytes,sample_time,directory,username\r\n" + rows + rows)
      << read_text(tele);
}

TEST(Sinks, TelemetryNdjsonFromAHealthCheck) {
  auto dir = temp_dir("tele-hc");
  std::string hc = gcm_binary().substr(0, gcm_binary().rfind('/')) + "/health_checks";
  for (int code : {2, 0}) {
    CommandSpec s;
    s.argv = {hc,
              "check-telemetry",
              "fair_cluster",
              "nagios",
              "--exit_code",
              std::to_string(code),
              "--health-check-name",
              "check zombie",
              "--node",
              "node1000",
              "--sink",
              "telemetry",
              "-o",
              "file_path=" + dir + "/hc.jsonl",
              "--log-folder",
              dir};
    auto r = run_command(s);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::ifstream in(dir + "/hc.jsonl");
  std::vector<nlohmann::json> recs;
  for (std::string line; std::getline(in, line);) recs.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0]["result"], 2);
  EXPECT_EQ(recs[1]["result"], 0);
  EXPECT_EQ(recs[0]["node"], "node1000");
  EXPECT_EQ(recs[0]["health_check"], "check zombie");
  EXPECT_TRUE(recs[0].contains("gpu_node_id")) << "every field, null ones too (GCM's asdict rows)";
  std::filesystem::remove_all(dir);
}

TEST(Sinks, HelpListsTheNewSinksAndTheirOptions) {
  auto r = run_gcm({"storage", "--help"});
  ASSERT_EQ(r.exit_code, 0);
  for (const char* s : {"webhook", "url=<str>", "bearer_token=<str>", "verify_ssl=<bool>", "timeout=<float>",
                        "telemetry", "format=<str>"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

}  // namespace
}  // namespace gcm::testing
