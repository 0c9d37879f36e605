// The job's own signal on the live Slurm testbed (tests/testbed/: 8 slurmd on this host, 2 fake GPUs each): one
// `gcm agent` per node and three srun jobs of the synthetic trainer (synthetic_trainer.py) at once. Each task is a
// rank that reads its own GPU through its node's fake NVML and reports to its node's agent over the agent's unix
// socket, which attributes it by what Slurm gave the task (SLURM_JOB_ID, SLURM_PROCID, SLURM_LOCALID,
// CUDA_VISIBLE_DEVICES, SLURM_STEP_GPUS); the ranks' gradient collective is an all-gather through files.
//   job A, node[1-4], 8 ranks: node3's GPU 1 runs 10 % slower from second 26 of the scenario. Every node's agent sees
//     the job's step time rise; node3's finds the clock drop on that GPU and names its rank, 5. gcm jobstats, from a
//     Prometheus that scraped the agents, tells it once in words, and the job dashboard's step-time panels and its
//     "Job slowdowns" annotation have it.
//   job B, node[5-6], 4 ranks: rank 2 (node6, GPU 0) stalls 5 ms a step from second 26: no hardware cause, and the
//     report names rank 2.
//   job C, node[7-8] (partition debug), 4 ranks: clean, with 2 % step jitter and an evaluation pause of every rank: nothing.
// rank_slow (a rank against its node's other ranks) needs three ranks on a node; with two GPUs a node it is
// job_signals_test.cc's, on one 8-GPU node.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/endpoint_url.h"
#include "core/http_client.h"
#include "helpers.h"
#include "process.h"
#include "testbed_agent.h"

namespace gcm::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr int kSlowFrom = 26;  // scenario second at which job A's GPU slows and job B's rank stalls
constexpr int kUntil = 44;     // scenario second at which every rank stops

json trainer_node_scenario(int node) {
  json s = {{"devices", json::array()}};
  for (int i = 0; i < 2; ++i) {
    json sm = 1980;
    if (node == 3 && i == 1)
      sm = {{"schedule", json::array({{{"from_s", 0}, {"value", 1980}}, {{"from_s", kSlowFrom}, {"value", 1782}}})}};
    s["devices"].push_back({{"uuid", "GPU-n" + std::to_string(node) + "-" + std::to_string(i)},
                            {"utilization", {{"gpu", 95}, {"memory", 40}}},
                            {"clocks", {{"sm", sm}}},
                            {"max_clocks", {{"sm", 1980}, {"graphics", 1980}, {"mem", 2619}}},
                            {"ecc", {{"mode", 1}, {"volatile_corrected", 0}, {"volatile_uncorrected", 0}}},
                            {"processes", json::array()}});
  }
  return s;
}

// Prometheus's answer to an instant query (the "result" array; empty when it fails).
json prometheus_result(HttpClient& http, const std::string& url, const std::string& query) {
  try {
    auto r = http.post(url + "/api/v1/query", "query=" + percent_encoded(query),
                       {"Content-Type: application/x-www-form-urlencoded"}, 10s);
    json j = json::parse(r.body);
    return j.value("status", "") == "success" ? j["data"]["result"] : json::array();
  } catch (const std::exception&) {
    return json::array();
  }
}

// One value per node label of a query's answer.
std::map<std::string, double> by_node(const json& result) {
  std::map<std::string, double> out;
  for (const auto& r : result) out[r["metric"].value("node", "")] = std::stod(r["value"][1].get<std::string>());
  return out;
}

// The expression of a panel or annotation of deploy/grafana/gcm-job.json, for one job on every cluster.
std::string job_dashboard_expression(const std::string& kind, const std::string& title, const std::string& job) {
  json d = json::parse(read_text(std::string(GCM_SOURCE_DIR) + "/deploy/grafana/gcm-job.json"));
  std::string expr;
  if (kind == "annotation") {
    for (const auto& a : d["annotations"]["list"])
      if (a["name"] == title) expr = a["target"]["expr"];
  } else {
    for (const auto& p : d["panels"])
      if (p["title"] == title) expr = p["targets"][0]["expr"];
  }
  EXPECT_FALSE(expr.empty()) << "gcm-job.json has no " << kind << " \"" << title << "\"";
  for (size_t at; (at = expr.find("$cluster")) != std::string::npos;) expr.replace(at, 8, ".*");
  for (size_t at; (at = expr.find("$job")) != std::string::npos;) expr.replace(at, 4, job);
  return expr;
}

TEST(JobSignalsOnTestbed, ASlowGpuAStalledRankAndACleanJobUnderSrun) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  ASSERT_FALSE(find_executable("prometheus").empty()) << "prometheus is not installed (scripts/install-deps.sh)";
  ::setenv("TZ", "UTC", 1);  // sacct (and gcm jobstats) read and print the testbed's times in UTC
  std::string dir = temp_dir("jobsig-tb");
  ::chmod(dir.c_str(), 0755);
  TestbedHooks hooks("gcm-jobsig-tb");

  // The scenarios' clock, shared by the agents and the ranks: second 0 is now.
  std::string epoch = std::to_string(static_cast<int64_t>(std::time(nullptr)));
  std::vector<std::unique_ptr<BackgroundProcess>> agents;
  std::map<int, int> ports;
  for (int n = 1; n <= 8; ++n) {
    std::string node = "node" + std::to_string(n);
    std::ofstream(dir + "/nvml-" + node + ".json") << trainer_node_scenario(n).dump();
    std::filesystem::create_directories(dir + "/gpu-jobs/" + node);
    ports[n] = free_port();
    agents.push_back(
        start_testbed_agent(dir, node, ports[n], {"--suite", ""}, "agent-logs", {"GCM_FAKE_NVML_EPOCH=" + epoch}));
  }
  int prom_port = free_port();
  std::ofstream prom_cfg(dir + "/prometheus.yml");
  prom_cfg << "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: gcm-agent\n    static_configs:\n";
  for (int n = 1; n <= 8; ++n)
    prom_cfg << "      - targets: ['127.0.0.1:" << ports[n] << "']\n        labels: {node: node" << n << "}\n";
  prom_cfg.close();
  BackgroundProcess prometheus(
      {"prometheus", "--config.file=" + dir + "/prometheus.yml", "--storage.tsdb.path=" + dir + "/tsdb",
       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
      dir + "/prometheus.stderr");
  std::string prom = "http://127.0.0.1:" + std::to_string(prom_port);

  // The prolog writes the mapping files the agents read (gcm_gpu_job_info, for gcm jobstats's GPU lanes).
  std::ofstream(dir + "/suite.toml") << "[suite]\nlog_folder = \"" << dir << "/logs\"\nstate_dir = \"" << dir
                                     << "/state\"\ngpu_job_mapping_dir = \"" << dir << "/gpu-jobs/{node}\"\n"
                                     << "[slurm]\nconf = \"" << std::getenv("SLURM_CONF") << "\"\n"
                                     << "[prolog]\nbudget = 10\n[epilog]\nbudget = 10\n";
  for (const char* p : {"prolog", "epilog"}) {
    std::string path = dir + "/" + p + ".sh";
    std::ofstream(path) << "#!/bin/sh\nexec " << gcm_binary() << " " << p << " --suite " << dir << "/suite.toml\n";
    ::chmod(path.c_str(), 0755);
  }
  // Each task: its node's fake NVML and agent socket (all the testbed's nodes are this host).
  std::ofstream(dir + "/rank.sh") << "#!/bin/sh\nexport GCM_TRAINER_RANK=1 GCM_FAKE_NVML_EPOCH=" << epoch
                                  << " GCM_FAKE_NVML_SCENARIO=" << dir << "/nvml-$SLURMD_NODENAME.json\nexec python3 "
                                  << GCM_SOURCE_DIR << "/tests/integration/synthetic_trainer.py --endpoint unix://"
                                  << dir << "/run/$SLURMD_NODENAME/job-signals.sock --nvml " << GCM_FAKE_NVML
                                  << " --collective-dir " << dir << "/collective/$SLURM_JOB_ID --seconds 120"
                                  << " --until " << kUntil << " \"$@\"\n";
  ::chmod((dir + "/rank.sh").c_str(), 0755);
  for (int n = 1; n <= 8; ++n)
    ASSERT_TRUE(eventually(
        [&] { return std::filesystem::exists(dir + "/run/node" + std::to_string(n) + "/job-signals.sock"); }, 30s))
        << "agent of node" << n << ": " << read_text(dir + "/agent-node" + std::to_string(n) + ".stderr");
  hooks.install(dir + "/prolog.sh", dir + "/epilog.sh");

  auto submit = [&](const std::string& partition, const std::string& nodes, int count,
                    const std::string& trainer_args) {
    std::string id = run_ok({"sbatch", "--parsable", "-p", partition, "-w", nodes, "-N", std::to_string(count),
                             "--ntasks-per-node=2", "--gres=gpu:2", "-t", "3", "-J", "gcm-jobsig-tb", "-o",
                             dir + "/job-%j.out", "--wrap", "srun " + dir + "/rank.sh " + trainer_args});
    return id.substr(0, id.find_first_of(";\n"));
  };
  std::string a = submit("gpu", "node[1-4]", 4, "");
  std::string b = submit("gpu", "node[5-6]", 2,
                         "--stall-rank 2 --stall-from " + std::to_string(kSlowFrom) + " --stall 0.005 --encoding json");
  std::string c = submit("debug", "node[7-8]", 2, "--jitter 0.0067 --eval-every 25 --eval 0.3");
  // The change-point test needs about 10 windows of the jobs' steps before the slowdown to compare with.
  ASSERT_TRUE(eventually(
      [&] {
        return sacct_field(a, "State") == "RUNNING" && sacct_field(b, "State") == "RUNNING" &&
               sacct_field(c, "State") == "RUNNING";
      },
      20s))
      << sacct_field(a, "State") << " " << sacct_field(b, "State") << " " << sacct_field(c, "State");
  int64_t started_at = static_cast<int64_t>(std::time(nullptr)) - std::stoll(epoch);
  ASSERT_LE(started_at, kSlowFrom - 12) << "the jobs started at second " << started_at
                                        << " of the scenario: too late for a reference before second " << kSlowFrom;
  HttpClient http;
  auto ended = [&](const std::string& id) {
    std::string state = sacct_field(id, "State");
    return !state.empty() && state != "PENDING" && state != "RUNNING";
  };
  ASSERT_TRUE(eventually([&] { return ended(a) && ended(b) && ended(c); }, std::chrono::seconds(kUntil + 60)))
      << sacct_field(a, "State") << " " << sacct_field(b, "State") << " " << sacct_field(c, "State");
  for (const auto& id : {a, b, c})
    EXPECT_EQ(sacct_field(id, "State"), "COMPLETED") << "job " << id << ": " << read_text(dir + "/job-" + id + ".out");
  std::this_thread::sleep_for(2s);  // Prometheus's last scrape of the ranks' last window

  // Every rank was attributed to its job and node by its credentials alone.
  for (const auto& [id, count] : std::vector<std::pair<std::string, int>>{{a, 4}, {b, 2}, {c, 2}}) {
    auto ranks = by_node(prometheus_result(http, prom, "max_over_time(gcm_job_ranks{job_id=\"" + id + "\"}[10m])"));
    EXPECT_EQ(ranks.size(), static_cast<size_t>(count)) << "job " << id;
    for (const auto& [node, n] : ranks) EXPECT_EQ(n, 2) << "job " << id << " on " << node;
  }
  auto slowdowns = [&](const std::string& id) {
    return by_node(prometheus_result(
        http, prom, "max_over_time(gcm_job_slowdown_events_total{job_id=\"" + id + "\"}[10m])"));
  };
  auto causes = [&](const std::string& id) {
    std::map<std::string, std::string> out;
    for (const auto& r : prometheus_result(http, prom, "gcm_job_slowdown_info{job_id=\"" + id + "\"}[10m]"))
      out[r["metric"]["node"]] = r["metric"]["hardware_cause"];
    return out;
  };
  auto agent_log = [&](int n) {
    return read_text(dir + "/agent-logs/node" + std::to_string(n) + "/agent_logs/agent.log");
  };

  // Job A: node3's agent explains the slowdown by its GPU 1's clock and names rank 5.
  auto a_slowdowns = slowdowns(a);
  EXPECT_EQ(a_slowdowns["node3"], 1) << agent_log(3).substr(0, 4000);
  EXPECT_EQ(causes(a)["node3"], "clock_drop");
  std::string log3 = agent_log(3);
  EXPECT_NE(log3.find("step time of job " + a + " rose"), std::string::npos) << log3.substr(0, 4000);
  // "is the slowest": the window's slowest rank (rank_slow, which would say "has been the slowest since", needs
  // three ranks on the node).
  EXPECT_NE(log3.find("rank 5 (GPU 1 on node3) is the slowest, when its SM clock fell 10 % (no clock event reason "
                      "set)"),
            std::string::npos)
      << log3.substr(0, 4000);
  for (const char* other : {"node1", "node2", "node4"}) {
    EXPECT_LE(a_slowdowns[other], 1) << other;
    if (a_slowdowns[other] == 1) {
      EXPECT_EQ(causes(a)[other], "none") << other;
    }
  }
  // Job B: the stall has no hardware cause; node6's agent names rank 2.
  auto b_slowdowns = slowdowns(b);
  EXPECT_EQ(b_slowdowns["node6"], 1) << agent_log(6).substr(0, 4000);
  EXPECT_EQ(causes(b)["node6"], "none");
  std::string log6 = agent_log(6);
  EXPECT_NE(log6.find("rank 2 (GPU 0 on node6) is the slowest; no hardware cause found on the job's GPUs"),
            std::string::npos)
      << log6.substr(0, 4000);
  // Job C: nothing.
  for (const auto& [node, n] : slowdowns(c)) EXPECT_EQ(n, 0) << node << ": " << agent_log(node == "node7" ? 7 : 8);

  // gcm jobstats: one slowdown of job A, told by node3, in words and in JSON.
  auto r = run_gcm({"jobstats", a, "--prometheus-url", prom, "--step", "1", "--json"}, 120s, {"TZ=UTC"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["step_time"]["slowdowns"].size(), 1u) << j["step_time"].dump(1);
  json d = j["step_time"]["slowdowns"][0];
  EXPECT_EQ(d["node"], "node3");
  EXPECT_EQ(d["rank"], 5);
  EXPECT_EQ(d["gpu"], 1);
  EXPECT_EQ(d["cause_gpu"], 1);
  EXPECT_EQ(d["hardware_cause"], "clock_drop");
  EXPECT_NE(d["nodes"].dump().find("node3"), std::string::npos);
  EXPECT_GT(d["rise_ratio"].get<double>(), 0.05);
  EXPECT_EQ(j["step_time"]["nodes"].size(), 4u);
  EXPECT_EQ(j["job"]["gpus"], 8);
  r = run_gcm({"jobstats", a, "--prometheus-url", prom, "--step", "1"}, 120s, {"TZ=UTC"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Step time (the job's own signal, per node):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank 5 (GPU 1 on node3) was its node's slowest; the node agent found on GPU 1 of node3: its "
                       "SM clock fell with no clock event reason set"),
            std::string::npos)
      << r.out;
  // Job B in gcm jobstats: node6's slowest rank computed longest, so node6 tells it.
  r = run_gcm({"jobstats", b, "--prometheus-url", prom, "--step", "1", "--json"}, 120s, {"TZ=UTC"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = json::parse(r.out);
  ASSERT_EQ(j["step_time"]["slowdowns"].size(), 1u) << j["step_time"].dump(1);
  d = j["step_time"]["slowdowns"][0];
  EXPECT_EQ(d["hardware_cause"], "none");
  EXPECT_EQ(d["rank"], 2) << d.dump(1);
  EXPECT_NE(d["explanation"].get<std::string>().find("rank 2 (GPU 0 on node6) was its node's slowest; no hardware "
                                                     "cause found on the job's GPUs (software or data)"),
            std::string::npos)
      << d["explanation"];
  r = run_gcm({"jobstats", c, "--prometheus-url", prom, "--step", "1", "--json"}, 120s, {"TZ=UTC"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(json::parse(r.out)["step_time"]["slowdowns"].empty()) << r.out.substr(0, 3000);

  // The job dashboard's step-time panels and its slowdown annotation have job A (over the whole run).
  for (const char* panel : {"Step time per node", "Step time against the job's usual pace"}) {
    std::string q = "max_over_time((" + job_dashboard_expression("panel", panel, a) + ")[10m:1s])";
    EXPECT_EQ(prometheus_result(http, prom, q).size(), 4u) << panel << ": " << q;
  }
  std::string q = "max_over_time((" + job_dashboard_expression("annotation", "Job slowdowns", a) + ")[10m:1s])";
  json slowed = prometheus_result(http, prom, q);
  bool node3_marked = false;
  for (const auto& s : slowed)
    node3_marked |= s["metric"].value("node", "") == "node3" && s["metric"].value("hardware_cause", "") == "clock_drop";
  EXPECT_TRUE(node3_marked) << q << "\n" << slowed.dump(1);

  for (auto& agent : agents) EXPECT_EQ(agent->stop(SIGTERM, 10s), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcm::testing
