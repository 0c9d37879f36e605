// slurm_monitor against slurmctld's own OpenMetrics on the live testbed (Slurm 25.11, MetricsType=metrics/openmetrics;
// the testbed turns it on where the plugin is built): every number docs/reference/collectors.md says agrees is equal
// in one round, and what one round costs slurmctld each way, counted by sdiag's RPC table. The golden form of the
// same comparison is unit/collectors/slurm_monitor_openmetrics_test.cc.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "core/http_client.h"
#include "exposition_text.h"
#include "helpers.h"
#include "slurm_fakes.h"
#include "slurm_openmetrics_pairs.h"

namespace gcm::testing {
namespace {

using nlohmann::json;

// slurmctld's HTTP address ("http://127.0.0.1:6817") when it serves OpenMetrics; "" when it does not.
std::string openmetrics_base() {
  std::string config = run_ok({"scontrol", "show", "config"});
  std::smatch m;
  if (!std::regex_search(config, m, std::regex(R"(\nMetricsType\s*=\s*metrics/openmetrics\s*\n)"))) return "";
  if (!std::regex_search(config, m, std::regex(R"(\nSlurmctldPort\s*=\s*(\d+))")))
    throw std::runtime_error("scontrol show config: no SlurmctldPort");
  std::string port = m[1];
  // SlurmctldHost[0] = name(address) or name.
  if (!std::regex_search(config, m, std::regex(R"(\nSlurmctldHost\[0\]\s*=\s*([^\s(]+)(?:\(([^)\s]+)\))?)")))
    throw std::runtime_error("scontrol show config: no SlurmctldHost");
  std::string host = m[2].matched ? m[2].str() : m[1].str();
  return "http://" + host + ":" + port;
}

#define REQUIRE_OPENMETRICS(base)                                                                                  \
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)"; \
  std::string base = openmetrics_base();                                                                           \
  if (base.empty())                                                                                                \
  GTEST_SKIP() << "the testbed's slurmctld has no MetricsType=metrics/openmetrics (Slurm 25.11 and later: "        \
                  "GCM_TESTBED_SLURM=25.11)"

Exposition fetch(HttpClient& http, const std::string& base, const std::string& endpoint) {
  std::string url = base + "/metrics/" + endpoint;
  HttpResponse r = http.get(url, std::chrono::seconds(10));
  if (r.status != 200) throw std::runtime_error(url + ": HTTP " + std::to_string(r.status) + ": " + r.body);
  return parse_exposition(r.body, url);
}

using Endpoints = std::map<std::string, Exposition>;
Endpoints fetch_all(HttpClient& http, const std::string& base) {
  Endpoints out;
  for (const char* e : {"nodes", "jobs", "scheduler"}) out.emplace(e, fetch(http, base, e));
  return out;
}

json slurm_log_of_one_round(const std::vector<std::string>& backend = {}) {
  std::vector<std::string> args = {"slurm_monitor", "--once",  "--sink",       "stdout",
                                   "--cluster",     "testbed", "--log-folder", temp_dir("slurm-om")};
  args.insert(args.end(), backend.begin(), backend.end());
  auto r = run_gcm(args);
  if (r.exit_code != 0) throw std::runtime_error("slurm_monitor --once failed: " + r.err);
  for (auto& rec : records(r.out))
    if (rec.contains("nodes_total") && rec["derived_cluster"] == "testbed") return rec;
  throw std::runtime_error("slurm_monitor wrote no cluster-wide SLURMLog record: " + r.out);
}

TEST(SlurmOpenMetricsTestbed, DocumentedEqualNumbersAreEqual) {
  REQUIRE_OPENMETRICS(base);
  HttpClient http;
  http.set_max_body_bytes(8 << 20);
  // At least one running job, so that the job pairs are not 0 against 0: this one, or others' where the workload
  // of tests/testbed/workload.sh fills the partition.
  Job job({"-p", "gpu", "-J", "openmetrics-cmp", "--wrap", "exec sleep 300"});
  ASSERT_TRUE(eventually(
      [&] {
        return !run_ok({"squeue", "-h", "-t", "RUNNING", "-o", "%i"}).empty();
      },
      std::chrono::seconds(30)));
  // slurmctld's numbers read before and after the round: a pair whose series did not change between the two reads
  // must equal slurm_monitor's; one that changed (a backfill cycle, a job that ended) says nothing this round.
  // slurmdbd (which sacct asks) learns of a job start a moment after slurmctld: rounds are retried until one agrees.
  std::vector<std::string> mismatches;
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (attempt) std::this_thread::sleep_for(std::chrono::seconds(1));
    Endpoints before = fetch_all(http, base);
    json log = slurm_log_of_one_round();
    Endpoints after = fetch_all(http, base);
    mismatches.clear();
    size_t compared = 0, cluster_compared = 0;
    for (const auto* pairs : {&openmetrics_cluster_pairs(), &openmetrics_sdiag_pairs()})
      for (const auto& p : *pairs) {
        double was = before.at(p.endpoint).value(p.series), is = after.at(p.endpoint).value(p.series);
        ASSERT_TRUE(log.contains(p.field) && log[p.field].is_number()) << p.field << ": " << log.dump();
        if (was != is) continue;
        ++compared;
        cluster_compared += pairs == &openmetrics_cluster_pairs();
        if (log[p.field].get<double>() != was)
          mismatches.push_back(std::string(p.field) + " " + log[p.field].dump() + " against " + p.series + " " +
                               std::to_string(was));
      }
    std::printf("attempt %d: %zu pairs compared (%zu cluster pairs), %zu differ; jobs_running %s, nodes_total %s\n",
                attempt + 1, compared, cluster_compared, mismatches.size(), log["jobs_running"].dump().c_str(),
                log["nodes_total"].dump().c_str());
    if (mismatches.empty() && cluster_compared == openmetrics_cluster_pairs().size()) {
      EXPECT_GE(log["jobs_running"].get<int>(), 1);
      EXPECT_EQ(log["nodes_total"], 8);
      return;
    }
  }
  std::string all;
  for (const auto& m : mismatches) all += "\n  " + m;
  FAIL() << "no round in 10 agreed with slurmctld's OpenMetrics; the last differed in:" << all;
}

// sdiag's RPC table after `sdiag --reset`: the RPCs slurmctld served since, by type, less the REQUEST_STATS_INFO of
// the sdiag that reads it.
std::map<std::string, int> rpcs_since_reset() {
  json stats = json::parse(run_ok({"sdiag", "--all", "--json"})).at("statistics");
  std::map<std::string, int> out;
  for (const auto& t : stats.at("rpcs_by_message_type")) out[t.at("message_type")] = t.at("count").get<int>();
  if (--out["REQUEST_STATS_INFO"] == 0) out.erase("REQUEST_STATS_INFO");
  return out;
}
int total(const std::map<std::string, int>& rpcs) {
  int n = 0;
  for (const auto& [type, count] : rpcs) n += count;
  return n;
}
std::string describe(const std::map<std::string, int>& rpcs) {
  std::string s;
  for (const auto& [type, count] : rpcs) s += (s.empty() ? "" : ", ") + type + " " + std::to_string(count);
  return s.empty() ? "none" : s;
}

TEST(SlurmOpenMetricsTestbed, RpcsPerRoundBothWays) {
  REQUIRE_OPENMETRICS(base);
  HttpClient http;
  http.set_max_body_bytes(8 << 20);
  const char* rest_socket = std::getenv("GCM_TESTBED_REST_SOCKET");
  bool rest = rest_socket && std::filesystem::exists(rest_socket);
  // Three times each: another client or a slurmd's message may land in a round; the endpoints' figure is the
  // least of the three, which is 0 only if reading them costs slurmctld no RPC.
  int least_endpoints = 1 << 30;
  for (int round = 1; round <= 3; ++round) {
    run_ok({"sdiag", "--reset"});
    slurm_log_of_one_round();
    auto cli = rpcs_since_reset();
    std::map<std::string, int> over_rest;
    if (rest) {
      run_ok({"sdiag", "--reset"});
      slurm_log_of_one_round({"--slurm-backend", "rest", "--slurm-rest-url", std::string("unix:") + rest_socket});
      over_rest = rpcs_since_reset();
    }
    run_ok({"sdiag", "--reset"});
    for (const char* e : {"nodes", "jobs", "partitions", "scheduler"}) fetch(http, base, e);
    auto endpoints = rpcs_since_reset();
    least_endpoints = std::min(least_endpoints, total(endpoints));
    std::printf("round %d: slurm_monitor (cli) %d RPCs (%s); ", round, total(cli), describe(cli).c_str());
    if (rest) std::printf("slurm_monitor (rest) %d RPCs (%s); ", total(over_rest), describe(over_rest).c_str());
    std::printf("4 OpenMetrics endpoints %d RPCs (%s)\n", total(endpoints), describe(endpoints).c_str());
    // slurm_monitor reads the nodes from slurmctld one way or the other.
    EXPECT_GE(cli["REQUEST_NODE_INFO"], 1) << describe(cli);
  }
  EXPECT_EQ(least_endpoints, 0);
}

}  // namespace
}  // namespace gcm::testing
