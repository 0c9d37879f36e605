// Zombie GPUs end to end on the live Slurm testbed, every part real: one `gcm agent --drain` per node on the fake
// NVML, the prolog writing the GPU -> job mapping, Debian's Prometheus scraping the agents and evaluating the shipped
// deploy/prometheus/rules/gcm-peer-node.yml, Debian's Alertmanager sending GcmPeerSlowNode to `gcm drainer --drain`,
// and slurmctld.
//
// A 4-node job runs on node1-4 (2 GPUs each; its step runs on every node, so the prolog writes every node's GPU
// mapping: without PrologFlags=Alloc, Slurm runs the prolog where a step starts). From t = 20 s GPU 1 of node3 runs
// its SM clock 30 % lower, so node3 is 15 % slower than the job's other nodes, which no agent can see on its own node.
// node3 is drained with gcm's reason while the job keeps running; once the job ends the confirmation ([confirm]:
// `check-dcgmi diag -r 2` on a stand-in dcgmi) fails, so node3 stays drained and the next 4-node job lands elsewhere;
// when the diagnostic passes again the agent resumes node3. node7, drained by an operator, is never touched, by the
// drainer or by its agent.
//
// Time is compressed: agents sample every 0.2 s with 1 s windows, Prometheus scrapes and evaluates every second, and
// the rules file runs with every duration divided by 30 (a 30 s evaluation is a 1 s window in both), so the rules
// judge the same number of windows as in production.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/http_client.h"
#include "helpers.h"
#include "process.h"
#include "testbed_agent.h"

namespace gcm::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// The shipped rules with every duration divided by `factor` ("30s" -> "1000ms", "[2m20s]" -> "[4666ms]").
std::string scaled_rules(const std::string& text, int factor) {
  std::regex duration(R"((interval: |\[)((\d+)m)?((\d+)s)?(\]|\n))");
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), duration);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    if (!m[2].matched && !m[4].matched) continue;
    long seconds = (m[3].matched ? std::stol(m[3]) * 60 : 0) + (m[5].matched ? std::stol(m[5]) : 0);
    out += text.substr(last, static_cast<size_t>(m.position()) - last);
    out += m[1].str() + std::to_string(seconds * 1000 / factor) + "ms" + m[6].str();
    last = static_cast<size_t>(m.position() + m.length());
  }
  return out + text.substr(last);
}

json node_scenario(int node) {
  json s = {{"devices", json::array()}};
  for (int i = 0; i < 2; ++i) {
    json clock = 1980;
    if (node == 3 && i == 1)
      clock = {
          {"schedule",
           {{{"from_s", 0}, {"value", 1980}}, {{"from_s", 20}, {"value", 1386}}, {{"from_s", 50}, {"value", 1980}}}}};
    s["devices"].push_back({{"uuid", "GPU-n" + std::to_string(node) + "-" + std::to_string(i)},
                            {"utilization", {{"gpu", 95}, {"memory", 30}}},
                            {"clocks", {{"sm", clock}, {"graphics", clock}, {"mem", 2619}}},
                            {"max_clocks", {{"sm", 1980}, {"graphics", 1980}, {"mem", 2619}}},
                            {"ecc", {{"mode", 1}, {"volatile_corrected", 0}, {"volatile_uncorrected", 0}}},
                            {"processes", json::array()}});
  }
  return s;
}

const char* kDiagPass = R"({"DCGM GPU Diagnostic": {"test_categories": [{"category": "Performance", "tests": [
  {"name": "Targeted Stress", "results": [{"status": "Pass"}]}]}]}})";
const char* kDiagFail = R"({"DCGM GPU Diagnostic": {"test_categories": [{"category": "Performance", "tests": [
  {"name": "Targeted Stress", "results": [{"status": "Fail"}]}]}]}})";

TEST(ZombieOnTestbed, ASlowNodeIsDrainedByTheCrossNodeRuleThenResumedAfterItsConfirmation) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  ASSERT_FALSE(find_executable("prometheus").empty()) << "prometheus is not installed (scripts/install-deps.sh)";
  ASSERT_FALSE(find_executable("prometheus-alertmanager").empty())
      << "prometheus-alertmanager is not installed (scripts/install-deps.sh)";
  std::string dir = temp_dir("zombie-tb");
  ::chmod(dir.c_str(), 0755);
  TestbedHooks hooks("gcm-zombie-tb", {"node3", "node7"});
  run_ok({"scontrol", "update", "NodeName=node7", "State=DRAIN", "Reason=operator: maintenance"});

  // The confirmation: DCGM's level-2 diagnostic on a stand-in dcgmi that fails until the test says it passes.
  std::ofstream(dir + "/diag.json") << kDiagFail;
  std::ofstream(dir + "/dcgmi") << "#!/bin/sh\necho \"$@\" >> " << dir << "/dcgmi-calls\ncat " << dir << "/diag.json\n";
  ::chmod((dir + "/dcgmi").c_str(), 0755);
  std::ofstream(dir + "/suite.toml") << "[suite]\nlog_folder = \"" << dir << "/logs\"\nstate_dir = \"" << dir
                                     << "/state\"\ngpu_job_mapping_dir = \"" << dir << "/gpu-jobs/{node}\"\n"
                                     << "[slurm]\nconf = \"" << std::getenv("SLURM_CONF") << "\"\n"
                                     << "[environment]\nGCM_AGENT_RUN_DIR = \"" << dir << "/run/{node}\"\n"
                                     << "[prolog]\nbudget = 10\n[[prolog.checks]]\nname = \"agent verdict\"\n"
                                     << "check = \"agent-verdict\"\n"
                                     << "[epilog]\nbudget = 10\n"
                                     << "[confirm]\nbudget = 30\n[[confirm.checks]]\nname = \"dcgm diag\"\n"
                                     << "check = \"check-dcgmi diag\"\nargs = [\"--diag_level\", \"2\"]\n"
                                     << "options = { dcgmi_bin = \"" << dir << "/dcgmi\" }\ntimeout = 20\n";
  for (const char* p : {"prolog", "epilog"}) {
    std::string path = dir + "/" + p + ".sh";
    std::ofstream(path) << "#!/bin/sh\nexec " << gcm_binary() << " " << p << " --suite " << dir << "/suite.toml\n";
    ::chmod(path.c_str(), 0755);
  }

  // The agents of the job's nodes and of node7.
  const std::vector<int> agent_nodes = {1, 2, 3, 4, 7};
  std::vector<std::unique_ptr<BackgroundProcess>> agents;
  std::map<int, int> ports;
  auto agents_started = std::chrono::steady_clock::now();  // the scenarios' clock starts with the agents
  for (int n : agent_nodes) {
    std::string node = "node" + std::to_string(n);
    std::ofstream(dir + "/nvml-" + node + ".json") << node_scenario(n).dump();
    std::filesystem::create_directories(dir + "/gpu-jobs/" + node);
    ports[n] = free_port();
    agents.push_back(start_testbed_agent(dir, node, ports[n],
                                         {"--suite", dir + "/suite.toml", "--drain", "--drain-poll-interval", "1"}));
  }

  // The drainer, Alertmanager and Prometheus with the shipped rules, scaled.
  int drainer_port = free_port(), am_port = free_port(), prom_port = free_port();
  BackgroundProcess drainer({gcm_binary(), "--config", "/dev/null", "drainer", "--drain", "--listen",
                             "127.0.0.1:" + std::to_string(drainer_port), "--log-folder", dir + "/drainer-logs"},
                            dir + "/drainer.stderr");
  std::ofstream(dir + "/alertmanager.yml")
      << "route:\n  receiver: gcm-drainer\n  group_by: [alertname, node]\n  group_wait: 1s\n  group_interval: 1s\n"
      << "  repeat_interval: 1h\nreceivers:\n  - name: gcm-drainer\n    webhook_configs:\n"
      << "      - url: http://127.0.0.1:" << drainer_port << "/alertmanager\n        send_resolved: true\n";
  BackgroundProcess alertmanager(
      {"prometheus-alertmanager", "--config.file=" + dir + "/alertmanager.yml", "--storage.path=" + dir + "/am",
       "--cluster.listen-address=", "--web.listen-address=127.0.0.1:" + std::to_string(am_port)},
      dir + "/alertmanager.stderr");
  std::ofstream(dir + "/rules.yml") << scaled_rules(
      read_text(GCM_SOURCE_DIR "/deploy/prometheus/rules/gcm-peer-node.yml"), 30);
  std::ofstream prom_cfg(dir + "/prometheus.yml");
  prom_cfg << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: ['" << dir << "/rules.yml']\n"
           << "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: ['127.0.0.1:" << am_port << "']\n"
           << "scrape_configs:\n  - job_name: gcm-agent\n    static_configs:\n";
  for (int n : agent_nodes)
    prom_cfg << "      - targets: ['127.0.0.1:" << ports[n] << "']\n        labels: {node: node" << n << "}\n";
  prom_cfg.close();
  BackgroundProcess prometheus(
      {"prometheus", "--config.file=" + dir + "/prometheus.yml", "--storage.tsdb.path=" + dir + "/tsdb",
       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
      dir + "/prometheus.stderr");

  for (int n : agent_nodes)
    ASSERT_TRUE(eventually(
        [&] { return std::filesystem::exists(dir + "/run/node" + std::to_string(n) + "/agent-state.json"); }, 30s))
        << "agent of node" << n << ": " << read_text(dir + "/agent-node" + std::to_string(n) + ".stderr");
  hooks.install(dir + "/prolog.sh", dir + "/epilog.sh");
  auto first_line = [](std::string s) { return s.substr(0, s.find_first_of(";\n")); };
  std::string job =
      first_line(run_ok({"sbatch", "--parsable", "-N", "4", "-w", "node[1-4]", "-p", "gpu", "--gres=gpu:2", "-J",
                         "gcm-zombie-tb", "-o", "/dev/null", "--wrap", "srun sleep 35"}));
  auto job_state = [&](const std::string& id) { return run_ok({"squeue", "-h", "-j", id, "-o", "%T"}); };
  HttpClient http;
  auto metrics = [&](int n) {
    try {
      return http.get("http://127.0.0.1:" + std::to_string(ports[n]) + "/metrics", 2s).body;
    } catch (const std::exception&) {
      return std::string();
    }
  };
  auto diagnose = [&] {
    return "drainer: " + read_text(dir + "/drainer.stderr").substr(0, 2000) +
           "\nagent node3: " + read_text(dir + "/agent-logs/node3/agent_logs/agent.log").substr(0, 4000) +
           "\nprometheus: " + read_text(dir + "/prometheus.stderr").substr(0, 1500) +
           "\nalertmanager: " + read_text(dir + "/alertmanager.stderr").substr(0, 1500) +
           "\nnode3 metrics: " + metrics(3).substr(0, 1000);
  };

  // node3 is drained with gcm's reason while the job keeps running.
  ASSERT_TRUE(eventually([&] { return slurm_node_field("node3", "State").find("DRAIN") != std::string::npos; }, 60s))
      << slurm_node_field("node3", "State") << "\n"
      << diagnose();
  double to_drain = std::chrono::duration<double>(std::chrono::steady_clock::now() - agents_started).count() - 20;
  std::cout << "from the slowdown to node3's drain: " << to_drain << " s of 1 s windows\n";
  RecordProperty("slowdown_to_drain_windows", std::to_string(to_drain));
  std::string reason = slurm_node_field("node3", "Reason");
  EXPECT_EQ(reason.rfind("gcm: detector: peer_slow_node: job " + job + " SM clock -", 0), 0u) << reason;
  EXPECT_NE(reason.find("vs the median of 4 nodes"), std::string::npos) << reason;
  EXPECT_NE(job_state(job).find("RUNNING"), std::string::npos) << job_state(job);
  for (int n : {1, 2, 4})
    EXPECT_EQ(slurm_node_field("node" + std::to_string(n), "State").find("DRAIN"), std::string::npos);

  // The job finishes; node3, idle, fails its confirmation and stays drained: the next job lands elsewhere.
  ASSERT_TRUE(eventually([&] { return job_state(job).empty(); }, 60s)) << job_state(job);
  ASSERT_TRUE(eventually(
      [&] { return metrics(3).find("gcm_agent_drain_actions_total{action=\"confirm_failed\"}") != std::string::npos; },
      30s))
      << diagnose();
  EXPECT_NE(slurm_node_field("node3", "State").find("DRAIN"), std::string::npos);
  std::string next = first_line(run_ok({"sbatch", "--parsable", "-N", "4", "-p", "gpu", "--gres=gpu:2", "-J",
                                        "gcm-zombie-tb", "-o", "/dev/null", "--wrap", "srun sleep 30"}));
  ASSERT_TRUE(eventually([&] { return job_state(next).find("RUNNING") != std::string::npos; }, 30s)) << job_state(next);
  std::string nodes = run_ok({"squeue", "-h", "-j", next, "-o", "%N"});
  std::string expanded = run_ok({"scontrol", "show", "hostnames", nodes.substr(0, nodes.find('\n'))});
  EXPECT_EQ(expanded.find("node3\n"), std::string::npos) << expanded;
  EXPECT_EQ(expanded.find("node7\n"), std::string::npos) << expanded;

  // The diagnostic passes again: the agent resumes node3, which the detector alone had drained.
  std::ofstream(dir + "/diag.json") << kDiagPass;
  EXPECT_TRUE(eventually([&] { return slurm_node_field("node3", "State").find("DRAIN") == std::string::npos; }, 30s))
      << slurm_node_field("node3", "State") << "\n"
      << diagnose();
  EXPECT_NE(read_text(dir + "/dcgmi-calls").find("diag --host localhost -j -r 2"), std::string::npos);
  // The page is rendered once per window: the count shows at the next one.
  EXPECT_TRUE(eventually(
      [&] { return metrics(3).find("gcm_agent_drain_actions_total{action=\"resumed\"} 1") != std::string::npos; },
      10s));

  // node7's operator drain: an alert for it changes nothing, and its agent (polling, idle) never resumes it.
  std::string alert = R"({"status":"firing","alerts":[{"status":"firing","labels":{"alertname":"GcmPeerSlowNode",)"
                      R"("gcm_action":"drain","node":"node7"},"annotations":{"gcm_evidence":"test"}}]})";
  EXPECT_EQ(http.post("http://127.0.0.1:" + std::to_string(drainer_port) + "/alertmanager", alert,
                      {"Content-Type: application/json"}, 5s)
                .status,
            200);
  EXPECT_TRUE(eventually(
      [&] {
        return http.get("http://127.0.0.1:" + std::to_string(drainer_port) + "/metrics", 2s)
                   .body.find("gcm_drainer_actions_total{action=\"already_drained\"} 1") != std::string::npos;
      },
      10s));
  EXPECT_NE(slurm_node_field("node7", "State").find("DRAIN"), std::string::npos);
  EXPECT_EQ(slurm_node_field("node7", "Reason"), "operator: maintenance");
  EXPECT_NE(http.get("http://127.0.0.1:" + std::to_string(drainer_port) + "/metrics", 2s)
                .body.find("gcm_drainer_actions_total{action=\"drained\"} 1"),
            std::string::npos);

  for (auto& a : agents) EXPECT_EQ(a->stop(SIGTERM, 10s), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcm::testing
