// A real Prometheus (Debian's package) scrapes the prometheus sink of a running gcm; the test asks Prometheus's
// query API for the values. promtool lints the textfile output.
#include <signal.h>
#include <sys/statvfs.h>

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
  BackgroundProcess gcm({gcm_binary(), "storage", "--cluster", "it", "--statvfs-patterns", "it=^/$", "--sink",
                         "prometheus", "-o", "listen=127.0.0.1:" + std::to_string(gcm_port), "--interval", "1",
                         "--log-folder", dir},
                        dir + "/gcm.stderr");
  int prom_port = free_port();
  std::ofstream(dir + "/prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                         << "scrape_configs:\n  - job_name: gcm\n    static_configs:\n"
                                         << "      - targets: ['127.0.0.1:" << gcm_port << "']\n";
  BackgroundProcess prom({"prometheus", "--config.file=" + dir + "/prometheus.yml",
                          "--storage.tsdb.path=" + dir + "/tsdb",
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

TEST(Prometheus, PromtoolAcceptsTheTextfile) {
  ASSERT_FALSE(find_executable("promtool").empty()) << "promtool is not installed (scripts/install-deps.sh)";
  auto dir = temp_dir("promtool");
  std::string pure = dir + "/usage.jsonl";
  std::ofstream(pure) << "{\"user\": 0, \"used\": 1024, \"sample_time\": 1700000000, \"directory\": \"/a\"}\n";
  auto r = run_gcm({"storage", "--once", "--cluster", "c", "--statvfs-patterns", "c=^/$", "--pure-json-file-path",
                    pure, "--sink", "prometheus", "-o", "textfile=" + dir + "/gcm.prom", "--log-folder", dir});
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
