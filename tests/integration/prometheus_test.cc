// A real Prometheus (Debian's package) scrapes the prometheus sink of a running gcm; the test asks Prometheus's
// query API for the values. promtool lints the textfile output.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/http_client.h"
#include "helpers.h"
#include "process.h"

namespace gcm::testing {
namespace {

using namespace std::chrono_literals;

TEST(Prometheus, RealServerScrapesTheSinkAndAnswersQueries) {
  ASSERT_FALSE(find_executable("prometheus").empty()) << "prometheus is not installed (scripts/install-deps.sh)";
  auto dir = temp_dir("prometheus");
  int gcm_port = free_port();
  BackgroundProcess gcm(
      {gcm_binary(), "storage", "--cluster", "it", "--statvfs-patterns", "it=^/$", "--sink", "prometheus", "-o",
       "listen=127.0.0.1:" + std::to_string(gcm_port), "--interval", "1", "--log-folder", dir},
      dir + "/gcm.stderr");
  int prom_port = free_port();
  std::ofstream(dir + "/prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                         << "scrape_configs:\n  - job_name: gcm\n    static_configs:\n"
                                         << "      - targets: ['127.0.0.1:" << gcm_port << "']\n";
  BackgroundProcess prom(
      {"prometheus", "--config.file=" + dir + "/prometheus.yml", "--storage.tsdb.path=" + dir + "/tsdb",
       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
      dir + "/prometheus.stderr");
  HttpClient http;
  std::string base = "http://127.0.0.1:" + std::to_string(prom_port);
  nlohmann::json result;
  bool found = eventually(
      [&] {
        try {
          auto res = http.get(base + "/api/v1/query?query=gcm_statvfs_f_blocks", 2s);
          if (res.status != 200) return false;
          auto j = nlohmann::json::parse(res.body);
          result = j["data"]["result"];
          return result.is_array() && !result.empty();
        } catch (const std::exception&) {
          return false;
        }
      },
      60s);
  ASSERT_TRUE(found) << read_text(dir + "/prometheus.stderr").substr(0, 2000);
  const auto& sample = result[0];
  EXPECT_EQ(sample["metric"]["cluster"], "it");
  EXPECT_EQ(sample["metric"]["directory"], "/");
  EXPECT_EQ(sample["metric"]["job"], "gcm");
  struct statvfs st;
  ASSERT_EQ(statvfs("/", &st), 0);
  EXPECT_EQ(sample["value"][1], std::to_string(st.f_blocks));

  // The target is healthy: the exposition parsed cleanly (a malformed line would mark it down).
  auto targets = nlohmann::json::parse(http.get(base + "/api/v1/targets", 2s).body);
  const auto& t = targets["data"]["activeTargets"][0];
  EXPECT_EQ(t["health"], "up") << t.dump();
  EXPECT_EQ(t["lastError"], "");

  auto bsize = nlohmann::json::parse(http.get(base + "/api/v1/query?query=gcm_statvfs_f_bsize_bytes", 2s).body);
  ASSERT_FALSE(bsize["data"]["result"].empty());
  EXPECT_EQ(bsize["data"]["result"][0]["value"][1], std::to_string(st.f_bsize));

  EXPECT_EQ(gcm.stop(SIGTERM, 10s), 0);
}

// Connections that send nothing, or a head byte by byte, do not delay a scrape (the endpoint used to serve one
// connection at a time: ten idle sockets delayed a scrape by 51 s); only GET and HEAD are served.
TEST(Prometheus, IdleAndSlowConnectionsDoNotDelayAScrape) {
  auto dir = temp_dir("prometheus-slow");
  int port = free_port();
  BackgroundProcess gcm(
      {gcm_binary(), "storage", "--cluster", "it", "--statvfs-patterns", "it=^/$", "--sink", "prometheus", "-o",
       "listen=127.0.0.1:" + std::to_string(port), "--interval", "1", "--log-folder", dir},
      dir + "/gcm.stderr");
  HttpClient http;
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/metrics";
  ASSERT_TRUE(eventually(
      [&] {
        try {
          return http.get(url, 2s).body.find("gcm_statvfs_f_blocks") != std::string::npos;
        } catch (const std::exception&) {
          return false;
        }
      },
      30s))
      << read_text(dir + "/gcm.stderr");
  std::vector<int> socks;
  for (int i = 0; i < 20; ++i) {
    int s = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(port));
    ASSERT_EQ(::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    if (i % 2) (void)!::send(s, "GET /metr", 9, MSG_NOSIGNAL);  // half of them stop in the middle of a head
    socks.push_back(s);
  }
  auto t0 = std::chrono::steady_clock::now();
  auto res = http.get(url, 5s);
  auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(res.status, 200);
  EXPECT_NE(res.body.find("gcm_statvfs_f_blocks"), std::string::npos);
  EXPECT_LT(took, 3s) << "a scrape waited on the other connections";  // served one at a time: 10 s per idle socket
  EXPECT_EQ(http.post(url, "x", {"Content-Type: text/plain"}, 5s).status, 405);
  for (int s : socks) ::close(s);
  EXPECT_EQ(gcm.stop(SIGTERM, 10s), 0);
}

TEST(Prometheus, PromtoolAcceptsTheTextfile) {
  ASSERT_FALSE(find_executable("promtool").empty()) << "promtool is not installed (scripts/install-deps.sh)";
  auto dir = temp_dir("promtool");
  std::string pure = dir + "/usage.jsonl";
  std::ofstream(pure) << "{\"user\": 0, \"used\": 1024, \"sample_time\": 1700000000, \"directory\": \"/a\"}\n";
  auto r = run_gcm({"storage", "--once", "--cluster", "c", "--statvfs-patterns", "c=^/$", "--pure-json-file-path", pure,
                    "--sink", "prometheus", "-o", "textfile=" + dir + "/gcm.prom", "--log-folder", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string text = read_text(dir + "/gcm.prom");
  EXPECT_NE(text.find("gcm_pure_used_bytes{cluster=\"c\",user=\"0\",directory=\"/a\",username=\"root\"} 1024"),
            std::string::npos)
      << text;
  CommandSpec lint;
  lint.argv = {"promtool", "check", "metrics"};
  lint.stdin_data = text;
  auto res = run_command(lint);
  EXPECT_EQ(res.exit_code, 0) << res.out << res.err;
}

}  // namespace
}  // namespace gcm::testing
