// The shipped dashboards and rules against the real thing: Debian's Prometheus with deploy/prometheus/prometheus.yml
// (its relabelling included) and rules/, scraping a real `gcm agent` on the fake NVML (8 H100s: two jobs attributed
// from their processes' environments, a lost GPU, XID 79 and XID 13, an allocated idle GPU), a second on the fake
// amdsmi (node2, 8 MI300X with one job: the mixed cluster, each dashboard asked again for the AMD node), `gcm
// slurm_monitor` and `gcm slurm_job_monitor` on fake Slurm commands that print the recorded Slurm 22.05 outputs, and
// `gcm slurm_processor` receiving the agent's OTLP. Every PromQL expression of the dashboards and rules must parse and
// evaluate, and return data unless it is listed below with the reason this situation has nothing for it. Then
// Alertmanager with deploy/prometheus/alertmanager.yml receives the GPU-lost alert with its what-to-do text, and its
// drain route delivers it to a webhook.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "alertmanager_process.h"
#include "core/http_client.h"
#include "core/http_listener.h"
#include "helpers.h"
#include "process.h"
#include "slurm_processor_process.h"

namespace gcm::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

const std::string kSource = GCM_SOURCE_DIR;

std::string url_encode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
      out.push_back(static_cast<char>(c));
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

// Fake Slurm commands answering with the recorded 22.05 outputs (tests/fixtures/slurm-22.05/), except that node1, the
// agent's node with the lost GPU, is draining with gcm's reason ("gcm: check-nvidia-smi: GPU 7 is lost"), so that the
// panels and the alert about nodes drained by gcm have their situation (node7 stays drained by the testbed's reason).
std::string fake_slurm(const std::string& dir) {
  std::string bin = dir + "/slurm-bin", f = kSource + "/tests/fixtures/slurm-22.05/";
  fs::create_directories(bin);
  write_script(bin + "/sinfo",
               "if [ \"$1\" = -V ]; then cat '" + f +
                   "sinfo-V.txt'; exit 0; fi\n"
                   "case \"$*\" in *%all*) sed '/|node1|/{s/|none |/|gcm: check-nvidia-smi: GPU 7 is lost "
                   "|/;s/|mixed |/|draining |/}' '" +
                   f + "sinfo-all.txt' ;; *) cat '" + f + "sinfo-O-nodes.txt' ;; esac");
  write_script(bin + "/sdiag", "cat '" + f + "sdiag.txt'");
  write_script(bin + "/sacct", "cat '" + f + "sacct-slurm-monitor-local.txt'");
  write_script(bin + "/squeue", "cat '" + f + "squeue-O.txt'");
  return bin;
}

// A process environment as the kernel shows it in /proc/<pid>/environ.
void write_environ(const std::string& procfs, int pid, const std::vector<std::string>& vars) {
  fs::create_directories(procfs + "/" + std::to_string(pid));
  std::ofstream out(procfs + "/" + std::to_string(pid) + "/environ", std::ios::binary);
  for (const auto& v : vars) out << v << '\0';
}

// The node: tests/fake_nvml/scenarios/h100x8-gpm.json with job 77 (alice, ml, gpu) on GPUs 0-3 and job 78 (bob,
// infra, debug) on GPUs 4-6, whose GPU 6 does nothing; GPU 7 is lost; XID 79 on GPU 0, XID 13 on GPU 1.
json node_scenario(const std::string& procfs) {
  json sc = json::parse(read_text(kSource + "/tests/fake_nvml/scenarios/h100x8-gpm.json"));
  for (int i = 0; i < 7; ++i)
    sc["devices"][i]["processes"] = json::array({{{"pid", i < 4 ? 4100 : 4200}, {"used_memory", 1 << 30}}});
  sc["devices"][6]["utilization"]["gpu"] = 0;
  sc["devices"][7]["errors"] = {{"nvmlDeviceGetUtilizationRates", "GPU_IS_LOST"}};
  sc["devices"][0]["xid_events"] = json::array({{{"xid", 79}, {"at_ms", 300}}});
  sc["devices"][1]["xid_events"] = json::array({{{"xid", 13}, {"at_ms", 300}}});
  write_environ(procfs, 4100,
                {"SLURM_JOB_ID=77", "SLURM_JOB_USER=alice", "SLURM_JOB_ACCOUNT=ml", "SLURM_JOB_PARTITION=gpu",
                 "SLURM_JOB_GPUS=0,1,2,3", "GPU_DEVICE_ORDINAL=0,1,2,3"});
  write_environ(procfs, 4200,
                {"SLURM_JOB_ID=78", "SLURM_JOB_USER=bob", "SLURM_JOB_ACCOUNT=infra", "SLURM_JOB_PARTITION=debug",
                 "SLURM_JOB_GPUS=4,5,6", "GPU_DEVICE_ORDINAL=4,5,6"});
  return sc;
}

std::unique_ptr<BackgroundProcess> start_agent(const std::string& dir, int port, const std::string& otlp_url) {
  std::string procfs = dir + "/proc";
  std::ofstream(dir + "/scenario.json") << node_scenario(procfs).dump();
  std::ofstream(dir + "/kmsg");
  std::ofstream(dir + "/config.toml") << "[gcm.agent]\n";
  std::vector<std::string> argv = {gcm_binary(),
                                   "--config",
                                   dir + "/config.toml",
                                   "agent",
                                   "--collect-interval",
                                   "0.1",
                                   "--window",
                                   "0.5",
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(port),
                                   "--path.run",
                                   dir + "/run",
                                   "--path.kmsg",
                                   dir + "/kmsg",
                                   "--path.procfs",
                                   procfs,
                                   "--attribution",
                                   "nvml-processes",
                                   "--suite",
                                   dir + "/no-suite.toml",
                                   "--spool-dir",
                                   dir + "/spool",
                                   "--log-folder",
                                   dir + "/logs"};
  if (!otlp_url.empty()) argv.insert(argv.end(), {"--otlp-endpoint", otlp_url});
  return std::make_unique<BackgroundProcess>(
      argv, dir + "/agent.stderr",
      std::vector<std::string>{"GCM_FAKE_NVML_SCENARIO=" + dir + "/scenario.json",
                               std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML});
}

// The AMD node, node2: tests/fake_amdsmi/scenarios/mi300x8.json under `gcm --backend amdsmi agent`, all 8 GPUs in
// job 79 (carol, amd, partition amd) from their process's environment; GPU 5 reports a thermal-throttle event.
std::unique_ptr<BackgroundProcess> start_amd_agent(const std::string& dir, int port) {
  std::string amd = dir + "/amd", procfs = amd + "/proc";
  fs::create_directories(amd);
  json sc = json::parse(read_text(kSource + "/tests/fake_amdsmi/scenarios/mi300x8.json"));
  for (auto& d : sc["devices"]) d["processes"] = json::array({{{"pid", 4300}, {"vram_mem", 1 << 30}}});
  sc["devices"][5]["events"] = json::array({{{"type", "THERMAL_THROTTLE"}, {"at_ms", 300}, {"message", "hotspot"}}});
  write_environ(procfs, 4300,
                {"SLURM_JOB_ID=79", "SLURM_JOB_USER=carol", "SLURM_JOB_ACCOUNT=amd", "SLURM_JOB_PARTITION=amd",
                 "SLURM_JOB_GPUS=0,1,2,3,4,5,6,7", "ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7"});
  std::ofstream(amd + "/scenario.json") << sc.dump();
  std::ofstream(amd + "/kmsg");
  std::ofstream(amd + "/config.toml") << "[gcm]\nbackend = \"amdsmi\"\n[gcm.agent]\n";
  return std::make_unique<BackgroundProcess>(
      std::vector<std::string>{gcm_binary(),
                               "--config",
                               amd + "/config.toml",
                               "agent",
                               "--collect-interval",
                               "0.1",
                               "--window",
                               "0.5",
                               "--listen",
                               "127.0.0.1:" + std::to_string(port),
                               "--path.run",
                               amd + "/run",
                               "--path.kmsg",
                               amd + "/kmsg",
                               "--path.procfs",
                               procfs,
                               "--attribution",
                               "nvml-processes",
                               "--suite",
                               amd + "/no-suite.toml",
                               "--spool-dir",
                               amd + "/spool",
                               "--log-folder",
                               amd + "/logs"},
      amd + "/agent.stderr",
      std::vector<std::string>{"GCM_FAKE_AMDSMI_SCENARIO=" + amd + "/scenario.json",
                               std::string("GCM_AMDSMI_LIBRARY=") + GCM_FAKE_AMDSMI,
                               "GCM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"});
}

// deploy/prometheus/ copied into `dir` (prometheus.yml and rules/; targets/ written by the test), with the example's
// 15 s intervals at 1 s and its Alertmanager on `alertmanager_port`. Each change must apply exactly once, so a
// reshaped example fails here rather than testing something else.
void prepare_prometheus(const std::string& dir, int alertmanager_port, const std::vector<std::string>& agents,
                        const std::vector<std::string>& collectors, const std::vector<std::string>& processors,
                        const std::vector<std::string>& amd_agents = {}) {
  fs::copy(kSource + "/deploy/prometheus/rules", dir + "/rules", fs::copy_options::recursive);
  std::string cfg = read_text(kSource + "/deploy/prometheus/prometheus.yml");
  auto replace_once = [&](const std::string& from, const std::string& to) {
    size_t at = cfg.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    ASSERT_EQ(cfg.find(from, at + 1), std::string::npos) << from;
    cfg.replace(at, from.size(), to);
  };
  replace_once("scrape_interval: 15s", "scrape_interval: 1s");
  replace_once("evaluation_interval: 15s", "evaluation_interval: 1s");
  replace_once("'127.0.0.1:9093'", "'127.0.0.1:" + std::to_string(alertmanager_port) + "'");
  std::ofstream(dir + "/prometheus.yml") << cfg;
  fs::create_directories(dir + "/targets");
  auto list = [](const std::vector<std::string>& targets) {
    std::string s;
    for (const auto& t : targets) s += (s.empty() ? "'" : ", '") + t + "'";
    return "[" + s + "]";
  };
  auto group = [&](const std::vector<std::string>& targets) {
    return targets.empty() ? std::string("[]\n") : "- targets: " + list(targets) + "\n";
  };
  // The agent's address is 127.0.0.1, not a Slurm node name: the targets file names the node, as the example's
  // comment says to.
  std::ofstream agent_targets(dir + "/targets/gcm-agent.yml");
  agent_targets << "- targets: " << list(agents) << "\n  labels:\n"
                << "    cluster: demo\n    node: node1\n";
  if (!amd_agents.empty())
    agent_targets << "- targets: " << list(amd_agents) << "\n  labels:\n"
                  << "    cluster: demo\n    node: node2\n";
  agent_targets.close();
  std::ofstream(dir + "/targets/gcm-collectors.yml") << group(collectors);
  std::ofstream(dir + "/targets/gcm-processor.yml") << group(processors);
}

struct Prometheus {
  std::string dir, base;
  std::unique_ptr<BackgroundProcess> proc;
  HttpClient http;
  explicit Prometheus(const std::string& d) : dir(d) {
    int port = free_port();
    base = "http://127.0.0.1:" + std::to_string(port);
    proc = std::make_unique<BackgroundProcess>(
        std::vector<std::string>{"prometheus", "--config.file=" + dir + "/prometheus.yml",
                                 "--storage.tsdb.path=" + dir + "/tsdb",
                                 "--web.listen-address=127.0.0.1:" + std::to_string(port)},
        dir + "/prometheus.stderr");
  }
  // POST /api/v1/query: the whole answer (status, data or error).
  json query(const std::string& q) {
    try {
      auto r = http.post(base + "/api/v1/query", "query=" + url_encode(q),
                         {"Content-Type: application/x-www-form-urlencoded"}, 10s);
      return json::parse(r.body);
    } catch (const std::exception& e) {
      return {{"status", "error"}, {"error", e.what()}};
    }
  }
  // POST /api/v1/query_range over the last `seconds`, as Grafana asks for a panel's time series.
  json query_range(const std::string& q, int seconds, int step) {
    try {
      auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch());
      std::string body = "query=" + url_encode(q) + "&start=" + std::to_string(now.count() - seconds) +
                         "&end=" + std::to_string(now.count()) + "&step=" + std::to_string(step);
      auto r = http.post(base + "/api/v1/query_range", body, {"Content-Type: application/x-www-form-urlencoded"}, 10s);
      return json::parse(r.body);
    } catch (const std::exception& e) {
      return {{"status", "error"}, {"error", e.what()}};
    }
  }
  size_t count(const std::string& q) {
    auto j = query(q);
    return j.value("status", "") == "success" ? j["data"]["result"].size() : 0;
  }
  json get(const std::string& path) {
    try {
      return json::parse(http.get(base + path, 10s).body);
    } catch (const std::exception&) {
      return json::object();
    }
  }
  std::string log() const { return read_text(dir + "/prometheus.stderr").substr(0, 3000); }
};

// Grafana's template variables with values this situation has; Grafana's own interval variables as it sets them
// for a 5-minute range.
using Variables = std::vector<std::pair<std::string, std::string>>;
// The dashboards' variables for the NVIDIA node (node1, job 77) and for the AMD node (node2, job 79).
const Variables kNvidiaNode = {{"cluster", "demo"},   {"node", "node1"},    {"job", "77"},
                               {"user", "alice"},     {"partition", "gpu"}, {"__rate_interval", "1m"},
                               {"__interval", "15s"}, {"__range", "5m"}};
const Variables kAmdNode = {{"cluster", "demo"},  {"node", "node2"},         {"job", "79"},         {"user", "carol"},
                            {"partition", "amd"}, {"__rate_interval", "1m"}, {"__interval", "15s"}, {"__range", "5m"}};

std::string substitute(std::string q, const Variables& values = kNvidiaNode) {
  for (const auto& [name, value] : values)
    for (const std::string& ref : {"${" + name + "}", "$" + name}) {
      // "$node" must not eat the start of a longer name; variables are followed by a non-word character here.
      for (size_t at = q.find(ref); at != std::string::npos; at = q.find(ref, at + value.size())) {
        size_t end = at + ref.size();
        if (ref[1] != '{' && end < q.size() && (std::isalnum(static_cast<unsigned char>(q[end])) || q[end] == '_')) {
          at += 1;
          continue;
        }
        q.replace(at, ref.size(), value);
      }
    }
  return q;
}

struct Expression {
  std::string where, expr;
  bool range = false;  // Grafana asks a range query (time series panels, annotations), else an instant one
};

// Every PromQL expression of the dashboards: panel queries, annotation queries, and the series selector of each
// label_values() variable (label_values is Grafana's, not PromQL: its selector is what Prometheus is asked).
std::vector<Expression> dashboard_expressions() {
  std::vector<Expression> out;
  std::regex label_values(R"(^label_values\((.*),\s*(\w+)\)$)");
  for (const auto& entry : fs::directory_iterator(kSource + "/deploy/grafana")) {
    if (entry.path().extension() != ".json") continue;
    std::string file = entry.path().filename().string();
    json d = json::parse(read_text(entry.path().string()));
    for (const auto& p : d["panels"])
      for (const auto& t : p.value("targets", json::array()))
        out.push_back(
            {file + " panel \"" + p["title"].get<std::string>() + "\"", t["expr"], !t.value("instant", false)});
    for (const auto& v : d["templating"]["list"])
      if (v["type"] == "query") {
        std::smatch m;
        std::string q = v["query"];
        EXPECT_TRUE(std::regex_match(q, m, label_values)) << file << " variable " << v["name"] << ": " << q;
        out.push_back({file + " variable " + v["name"].get<std::string>(), m[1]});
      }
    for (const auto& a : d["annotations"]["list"])
      if (a.contains("target"))
        out.push_back({file + " annotation \"" + a["name"].get<std::string>() + "\"", a["target"]["expr"], true});
  }
  return out;
}

// The job-signal series need a training job reporting to the agent through its local endpoint, whose attribution
// reads the senders' real /proc while this agent's --path.procfs is the situation's fake one; job_signals_test.cc
// tests them with the synthetic trainer, and job_signals_testbed_test.cc asks a real Prometheus the job
// dashboard's step-time panels and its "Job slowdowns" annotation for a 4-node job that slowed.
constexpr const char* kNoJobSignal = "no job reports its own step times to the agent here";

// Expressions this situation has no data for, and why. An expression listed here that returns data fails the test
// too, so the list cannot go stale.
const std::map<std::string, std::string> kNoDataHere = {
    {"gcm_gpu_pcie_link_width{cluster=~\"demo\", node=~\"node1\"} < gcm_gpu_pcie_link_width_max{cluster=~\"demo\", "
     "node=~\"node1\"}",
     "every PCIe link of the scenario runs at its full width"},
    {"(gcm_gpu_health_reason{cluster=~\"demo\", reason=~\"hw_slowdown|hw_thermal|power_brake|peer_slow\"} == 1) and "
     "on(cluster, node, gpu) gcm_gpu_job_info{cluster=~\"demo\", job_id=\"77\"}",
     "no GPU of job 77 throttles or runs slow"},
    {"gcm_agent_source_up{cluster=~\"demo\", node=~\"node1\"} == 0", "every source of the agent is up"},
    {"increase(gcm_gpu_amd_events_total{cluster=~\"demo\", node=\"node1\"}[1m])",
     "node1's GPUs are NVIDIA's: they report XIDs, not amdsmi events"},
    {"sum by (event) (increase(gcm_gpu_amd_events_total{cluster=~\"demo\", node=~\"node1\"}[1m]))",
     "node1's GPUs are NVIDIA's: they report XIDs, not amdsmi events"},
    {"count by (namespace) (gcm_gpu_job_info{cluster=~\"demo\", pod!=\"\"})",
     "no GPU of the demo is given to a Kubernetes pod (tests/unit/processor and attribution test the kubelet's)"},
    {"max by (node) (gcm_job_step_duration_seconds{cluster=~\"demo\", job_id=\"77\"})", kNoJobSignal},
    {"max by (node) (gcm_job_slowest_compute_duration_seconds{cluster=~\"demo\", job_id=\"77\"})", kNoJobSignal},
    {"max by (node) (gcm_job_compute_duration_seconds{cluster=~\"demo\", job_id=\"77\"})", kNoJobSignal},
    {"max by (node) (gcm_job_step_time_ratio{cluster=~\"demo\", job_id=\"77\"})", kNoJobSignal},
    {"(gcm_job_slowed{cluster=~\"demo\", job_id=\"77\"} == 1) * on(cluster, node, job_id) "
     "group_left(hardware_cause) gcm_job_slowdown_info{cluster=~\"demo\", job_id=\"77\"}",
     kNoJobSignal},
    {"((gcm_gpu_health_reason{cluster=~\"demo\", reason=\"rank_slow\"} == 1) and on(cluster, node, gpu) "
     "gcm_gpu_job_info{cluster=~\"demo\", job_id=\"77\"}) or ALERTS{cluster=~\"demo\", job_id=\"77\", "
     "alertname=\"GcmStragglerNode\", alertstate=\"firing\"}",
     kNoJobSignal},
};

// The same for the AMD node (node2, job 79): what an MI300X has no series for, or what only node1's situation has.
constexpr const char* kAmdNodeIsHealthy = "every GPU and source of the AMD node is healthy: nothing to flag or drain";
constexpr const char* kNoXidsOnAmd = "AMD GPUs have no XIDs: their events are gcm_gpu_amd_events_total";
constexpr const char* kGpmIsNvidias = "GPM is NVIDIA's (Hopper and later)";
constexpr const char* kNvlinkIsNvidias = "NVLink is NVIDIA's; amdsmi gives XGMI an error status only";
constexpr const char* kNoPcieThroughputOnAmd = "amdsmi reports no PCIe throughput by direction";
constexpr const char* kRowRemapIsNvidias = "row remapping is NVIDIA's; AMD retires bad pages (gcm_gpu_bad_pages)";
constexpr const char* kAmdAgentPushesNoOtlp = "the AMD node's agent pushes no OTLP here: it has no spool";
constexpr const char* kNoAmdPartition = "the recorded Slurm has no partition amd";
const std::map<std::string, std::string> kNoDataOnAmdNode = {
    {"count by (REASON) (gcm_slurm_job_info{cluster=~\"demo\", STATE=\"PENDING\", PARTITION=~\"amd\"})",
     kNoAmdPartition},
    {"gcm_gpu_health_reason{cluster=~\"demo\", node=\"node2\"} == 1", kAmdNodeIsHealthy},
    {"gcm_gpu_xid_active{cluster=~\"demo\", node=\"node2\"} == 1", kNoXidsOnAmd},
    {"increase(gcm_gpu_xid_errors_total{cluster=~\"demo\", node=\"node2\"}[1m])", kNoXidsOnAmd},
    {"gcm_gpu_gpm_sm_activity_ratio{cluster=~\"demo\", node=\"node2\"}", kGpmIsNvidias},
    {"gcm_gpu_pcie_tx_bytes_per_second{cluster=~\"demo\", node=\"node2\"}", kNoPcieThroughputOnAmd},
    {"gcm_gpu_pcie_rx_bytes_per_second{cluster=~\"demo\", node=\"node2\"}", kNoPcieThroughputOnAmd},
    {"gcm_gpu_gpm_nvlink_tx_bytes_per_second{cluster=~\"demo\", node=\"node2\"}", kNvlinkIsNvidias},
    {"gcm_gpu_gpm_nvlink_rx_bytes_per_second{cluster=~\"demo\", node=\"node2\"}", kNvlinkIsNvidias},
    {"ALERTS{alertstate=\"firing\", gcm_action=\"drain\", cluster=~\"demo\", node=~\"node2\"}", kAmdNodeIsHealthy},
    {"max by (NODE_NAME, STATE, REASON, USER, TIMESTAMP) (gcm_slurm_node_info{cluster=~\"demo\", NODE_NAME=~\"node2\", "
     "REASON=~\"gcm: .*\"})",
     kAmdNodeIsHealthy},
    {"(gcm_gpu_health_reason{cluster=~\"demo\", node=~\"node2\"} == 1) and on(cluster, node, gpu) "
     "(gcm_gpu_health_state{cluster=~\"demo\", node=~\"node2\"} > 0)",
     kAmdNodeIsHealthy},
    {"sum by (xid) (increase(gcm_gpu_xid_errors_total{cluster=~\"demo\", node=~\"node2\"}[1m]))", kNoXidsOnAmd},
    {"sum by (action) (gcm_gpu_xid_active{cluster=~\"demo\", node=~\"node2\"})", kNoXidsOnAmd},
    {"gcm_gpu_remapped_rows_pending{cluster=~\"demo\", node=~\"node2\"}", kRowRemapIsNvidias},
    {"gcm_gpu_remapped_rows_failure{cluster=~\"demo\", node=~\"node2\"}", kRowRemapIsNvidias},
    {"gcm_gpu_remapped_rows_correctable{cluster=~\"demo\", node=~\"node2\"}", kRowRemapIsNvidias},
    {"gcm_gpu_remapped_rows_uncorrectable{cluster=~\"demo\", node=~\"node2\"}", kRowRemapIsNvidias},
    {"gcm_gpu_pcie_link_width{cluster=~\"demo\", node=~\"node2\"} < gcm_gpu_pcie_link_width_max{cluster=~\"demo\", "
     "node=~\"node2\"}",
     kAmdNodeIsHealthy},
    {"gcm_gpu_nvlink_links{cluster=~\"demo\", node=~\"node2\"} - gcm_gpu_nvlink_links_active{cluster=~\"demo\", "
     "node=~\"node2\"}",
     kNvlinkIsNvidias},
    {"sum by (cluster, node, gpu) (rate(gcm_gpu_nvlink_crc_flit_errors_total{cluster=~\"demo\", node=~\"node2\"}[1m]))",
     kNvlinkIsNvidias},
    {"sum by (cluster, node, gpu) (rate(gcm_gpu_nvlink_replay_errors_total{cluster=~\"demo\", node=~\"node2\"}[1m]) + "
     "rate(gcm_gpu_nvlink_recovery_errors_total{cluster=~\"demo\", node=~\"node2\"}[1m]))",
     kNvlinkIsNvidias},
    {"max by (node) (gcm_job_step_duration_seconds{cluster=~\"demo\", job_id=\"79\"})", kNoJobSignal},
    {"max by (node) (gcm_job_slowest_compute_duration_seconds{cluster=~\"demo\", job_id=\"79\"})", kNoJobSignal},
    {"max by (node) (gcm_job_compute_duration_seconds{cluster=~\"demo\", job_id=\"79\"})", kNoJobSignal},
    {"max by (node) (gcm_job_step_time_ratio{cluster=~\"demo\", job_id=\"79\"})", kNoJobSignal},
    {"(time() - gcm_gpu_xid_last_timestamp_seconds{cluster=~\"demo\"} < 120) and on(cluster, node, gpu) "
     "gcm_gpu_job_info{cluster=~\"demo\", job_id=\"79\"}",
     kNoXidsOnAmd},
    {"(gcm_gpu_health_reason{cluster=~\"demo\", reason=~\"hw_slowdown|hw_thermal|power_brake|peer_slow\"} == 1) and "
     "on(cluster, node, gpu) gcm_gpu_job_info{cluster=~\"demo\", job_id=\"79\"}",
     kAmdNodeIsHealthy},
    {"((gcm_gpu_health_reason{cluster=~\"demo\", reason=\"rank_slow\"} == 1) and on(cluster, node, gpu) "
     "gcm_gpu_job_info{cluster=~\"demo\", job_id=\"79\"}) or ALERTS{cluster=~\"demo\", job_id=\"79\", "
     "alertname=\"GcmStragglerNode\", alertstate=\"firing\"}",
     kNoJobSignal},
    {"(gcm_job_slowed{cluster=~\"demo\", job_id=\"79\"} == 1) * on(cluster, node, job_id) group_left(hardware_cause) "
     "gcm_job_slowdown_info{cluster=~\"demo\", job_id=\"79\"}",
     kNoJobSignal},
    {"gcm_agent_source_up{cluster=~\"demo\", node=~\"node2\"} == 0", kAmdNodeIsHealthy},
    {"gcm_agent_spool_bytes{cluster=~\"demo\", node=~\"node2\"} / gcm_agent_spool_limit_bytes{cluster=~\"demo\", "
     "node=~\"node2\"}",
     kAmdAgentPushesNoOtlp},
    {"gcm_agent_spool_oldest_age_seconds{cluster=~\"demo\", node=~\"node2\"}", kAmdAgentPushesNoOtlp},
    {"sum(rate(gcm_agent_sent_points_total{cluster=~\"demo\", node=~\"node2\"}[1m]))", kAmdAgentPushesNoOtlp},
    {"sum(rate(gcm_agent_dropped_points_total{cluster=~\"demo\", node=~\"node2\"}[1m]))", kAmdAgentPushesNoOtlp},
    {"sum(rate(gcm_agent_export_failures_total{cluster=~\"demo\", node=~\"node2\"}[1m]))", kAmdAgentPushesNoOtlp},
};

// Recording rules this situation has no data for (the same kind of list): every rule of the group.
const std::map<std::string, std::string> kNoDataGroups = {{"gcm-job-straggler", kNoJobSignal}};

class DashboardsAndRules : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(find_executable("prometheus").empty()) << "prometheus is not installed (scripts/install-deps.sh)";
  }
};

TEST_F(DashboardsAndRules, EveryExpressionParsesAndReturnsDataFromARealAgentAndCollectors) {
  std::string dir = temp_dir("dashboards");
  std::string bin = fake_slurm(dir);
  std::vector<std::string> path_env = {"PATH=" + bin + ":" + std::getenv("PATH")};
  // The processor receives the agent's OTLP; its downstream is a port where nothing listens (it spools).
  ProcessorProcess processor(dir, {"--downstream", "http://127.0.0.1:" + std::to_string(free_port()), "--attribution",
                                   "mapping-files", "--gpu-job-mapping-dir", dir});
  int agent_port = free_port(), monitor_port = free_port(), job_monitor_port = free_port(), amd_port = free_port();
  auto agent = start_agent(dir, agent_port, processor.url);
  auto amd_agent = start_amd_agent(dir, amd_port);
  BackgroundProcess monitor(
      {gcm_binary(), "slurm_monitor", "--cluster", "demo", "--interval", "2", "--sink", "prometheus", "-o",
       "listen=127.0.0.1:" + std::to_string(monitor_port), "--log-folder", dir},
      dir + "/slurm_monitor.stderr", path_env);
  BackgroundProcess job_monitor(
      {gcm_binary(), "slurm_job_monitor", "--cluster", "demo", "--interval", "2", "--sink", "prometheus", "-o",
       "listen=127.0.0.1:" + std::to_string(job_monitor_port), "--log-folder", dir},
      dir + "/slurm_job_monitor.stderr", path_env);
  prepare_prometheus(dir, free_port(), {"127.0.0.1:" + std::to_string(agent_port)},
                     {"127.0.0.1:" + std::to_string(monitor_port), "127.0.0.1:" + std::to_string(job_monitor_port)},
                     {processor.url.substr(std::string("http://").size())}, {"127.0.0.1:" + std::to_string(amd_port)});
  Prometheus prom(dir);

  // Ready when every source has been scraped, the detector compared the job's GPUs, the lost GPU's alert fires, the
  // once-a-minute usage rules ran (their group starts at an offset of up to a minute), and the peer-node group (every
  // 30 s, at its own offset) ran once with the job's GPUs scraped: its last recording rule, which its chain of rules
  // before it feeds within the same evaluation. Without that, the usage group could run first and the peer rules be
  // checked before their first evaluation with data (CI saw it once).
  std::vector<std::string> ready = {"gcm_gpu_job_info{node=\"node1\",user=\"alice\"}",
                                    "gcm_gpu_job_info{node=\"node2\",user=\"carol\"}",
                                    "gcm_gpu_peer_deviation_ratio{node=\"node2\"}",
                                    "gcm_gpu_peer_deviation_ratio",
                                    "gcm_slurm_nodes_total",
                                    "gcm_slurm_job_nodes",
                                    "gcm_slurm_processor_received_total",
                                    "gcm_agent_spool_limit_bytes",
                                    "gcm_collector_last_success_timestamp_seconds{collector=\"slurm_job_monitor\"}",
                                    "ALERTS{alertname=\"GcmGpuLost\",alertstate=\"firing\"}",
                                    "gcm:account:gpus",
                                    "gcm:account:gpu_hours_used:1h",
                                    "gcm_node_health_reason"};
  std::string missing;
  bool up = eventually(
      [&] {
        for (const auto& q : ready)
          if (prom.count(q) == 0) {
            missing = q;
            return false;
          }
        return true;
      },
      150s);
  ASSERT_TRUE(up) << "never got " << missing << "\n" << prom.log() << read_text(dir + "/agent.stderr");

  // The rules: loaded, each evaluated without an error (a rule that does not parse would not load at all).
  json rules = prom.get("/api/v1/rules");
  size_t rule_count = 0, recording = 0;
  std::set<std::string> firing;
  std::set<std::string> groups_seen;
  for (const auto& g : rules["data"]["groups"])
    for (const auto& r : g["rules"]) {
      ++rule_count;
      std::string name = r["name"];
      EXPECT_EQ(r["health"], "ok") << name << ": " << r.value("lastError", "") << "\n" << r["query"];
      if (r["type"] == "recording") {
        ++recording;
        bool listed = kNoDataGroups.count(g["name"].get<std::string>()) > 0;
        if (listed) groups_seen.insert(g["name"]);
        EXPECT_EQ(prom.count(name) > 0, !listed)
            << "recording rule " << name
            << (listed ? " is listed as having no data here but has some: " : " has no data: ") << r["query"];
      } else {
        for (const auto& a : r["alerts"])
          if (a["state"] == "firing") firing.insert(name);
      }
    }
  EXPECT_GE(rule_count, 50u) << rules.dump().substr(0, 2000);
  for (const auto& [group, why] : kNoDataGroups) EXPECT_TRUE(groups_seen.count(group)) << "no rule group " << group;
  // The situation's faults fire, and nothing else does: the rules raise no false alarm on a healthy rest.
  std::set<std::string> expected = {"GcmGpuLost", "GcmGpuXidRebootRequired", "GcmGpuXidApplication"};
  EXPECT_TRUE(eventually(
      [&] {
        firing.clear();
        json now = prom.get("/api/v1/rules");  // kept: a range-for over a member of a temporary would dangle
        for (const auto& g : now["data"]["groups"])
          for (const auto& r : g["rules"])
            for (const auto& a : r.value("alerts", json::array()))
              if (a["state"] == "firing") firing.insert(r["name"].get<std::string>());
        return firing == expected;
      },
      20s))
      << "firing: " << json(firing).dump();

  // Every dashboard expression, with the variables set.
  auto exprs = dashboard_expressions();
  EXPECT_GE(exprs.size(), 100u);
  size_t with_data = 0;
  std::set<std::string> listed_and_empty;
  for (const auto& e : exprs) {
    std::string q = substitute(e.expr);
    EXPECT_EQ(q.find('$'), std::string::npos) << e.where << ": a variable is left in " << q;
    // Range queries over the last 5 minutes at Grafana's step for such a panel ($__interval, 15 s).
    json r = e.range ? prom.query_range(q, 300, 15) : prom.query(q);
    if (r.value("status", "") != "success") {
      ADD_FAILURE() << e.where << " does not evaluate: " << q << "\n" << r.dump();
      continue;
    }
    bool has_data = !r["data"]["result"].empty();
    auto listed = kNoDataHere.find(q);
    if (listed != kNoDataHere.end()) {
      EXPECT_FALSE(has_data) << e.where << " is listed as having no data here (" << listed->second << ") but returns "
                             << r["data"]["result"].dump().substr(0, 500);
      listed_and_empty.insert(q);
    } else {
      EXPECT_TRUE(has_data) << e.where << " returns no data: " << q;
      with_data += has_data;
    }
  }
  for (const auto& [q, why] : kNoDataHere) EXPECT_TRUE(listed_and_empty.count(q)) << "no dashboard asks " << q;

  // The mixed cluster: every expression that names the node, job, user or partition, asked again for the AMD node.
  size_t amd_asked = 0, amd_with_data = 0;
  std::set<std::string> amd_listed_and_empty;
  for (const auto& e : exprs) {
    std::string q = substitute(e.expr, kAmdNode);
    if (q == substitute(e.expr)) continue;  // cluster-wide: asked above
    ++amd_asked;
    json r = e.range ? prom.query_range(q, 300, 15) : prom.query(q);
    if (r.value("status", "") != "success") {
      ADD_FAILURE() << e.where << " does not evaluate for the AMD node: " << q << "\n" << r.dump();
      continue;
    }
    bool has_data = !r["data"]["result"].empty();
    auto listed = kNoDataOnAmdNode.find(q);
    if (listed != kNoDataOnAmdNode.end()) {
      EXPECT_FALSE(has_data) << e.where << " is listed as having no data on the AMD node (" << listed->second
                             << ") but returns " << r["data"]["result"].dump().substr(0, 500);
      amd_listed_and_empty.insert(q);
    } else {
      EXPECT_TRUE(has_data) << e.where << " returns no data for the AMD node: " << q;
      amd_with_data += has_data;
    }
  }
  for (const auto& [q, why] : kNoDataOnAmdNode) EXPECT_TRUE(amd_listed_and_empty.count(q)) << "no dashboard asks " << q;
  std::printf("%zu expressions asked for the AMD node: %zu returned data, %zu have none there (listed)\n", amd_asked,
              amd_with_data, amd_listed_and_empty.size());
  std::printf(
      "%zu dashboard expressions: %zu returned data, %zu have none in this situation (listed); %zu rules "
      "(%zu recording) evaluated without error; firing: %s\n",
      exprs.size(), with_data, listed_and_empty.size(), rule_count, recording, json(firing).dump().c_str());

  EXPECT_EQ(agent->stop(SIGTERM, 10s), 0);
  EXPECT_EQ(amd_agent->stop(SIGTERM, 10s), 0);
  EXPECT_EQ(monitor.stop(SIGTERM, 10s), 0);
  EXPECT_EQ(job_monitor.stop(SIGTERM, 10s), 0);
}

// Prometheus with the shipped rules and the agent with a lost GPU; Alertmanager with the shipped configuration,
// whose drain webhook points at a listener of the test instead of 127.0.0.1:9467 (so no other receiver on this
// machine gets a test's alert). Alertmanager's API holds GcmGpuLost with its what-to-do text, and the webhook gets
// it with gcm_action="drain" and the node's name.
TEST_F(DashboardsAndRules, AlertmanagerReceivesTheLostGpuAlertWithWhatToDo) {
  ASSERT_FALSE(AlertmanagerProcess::binary().empty())
      << "prometheus-alertmanager is not installed (scripts/install-deps.sh)";
  std::string dir = temp_dir("alertmanager");
  std::mutex mu;
  std::vector<json> webhook_posts;
  HttpListenerOptions lo;
  HttpListener webhook(lo, [&](const HttpRequest& req) {
    std::lock_guard lock(mu);
    if (req.method == "POST" && req.path == "/alertmanager") webhook_posts.push_back(json::parse(req.body));
    return HttpReply{200, "text/plain", "ok\n", ""};
  });
  webhook.start();
  std::string am_cfg = read_text(kSource + "/deploy/prometheus/alertmanager.yml");
  const std::string shipped = "http://127.0.0.1:9467/alertmanager";
  size_t at = am_cfg.find(shipped);
  ASSERT_NE(at, std::string::npos) << "the example no longer points the drain webhook at " << shipped;
  am_cfg.replace(at, shipped.size(), "http://127.0.0.1:" + std::to_string(webhook.port()) + "/alertmanager");
  std::ofstream(dir + "/alertmanager.yml") << am_cfg;
  AlertmanagerProcess am(dir, dir + "/alertmanager.yml");

  int agent_port = free_port();
  auto agent = start_agent(dir, agent_port, "");
  prepare_prometheus(dir, am.port(), {"127.0.0.1:" + std::to_string(agent_port)}, {}, {});
  Prometheus prom(dir);

  json lost;
  bool received = eventually(
      [&] {
        for (const auto& a : am.alerts())
          if (a["labels"].value("alertname", "") == "GcmGpuLost") {
            lost = a;
            return true;
          }
        return false;
      },
      90s);
  ASSERT_TRUE(received) << prom.log() << am.log();
  EXPECT_EQ(lost["labels"]["node"], "node1");
  EXPECT_EQ(lost["labels"]["cluster"], "demo");
  EXPECT_EQ(lost["labels"]["gpu"], "7");
  EXPECT_EQ(lost["labels"]["gcm_action"], "drain");
  EXPECT_EQ(lost["labels"]["severity"], "critical");
  std::string description = lost["annotations"]["description"];
  EXPECT_NE(description.find("What to do: drain node1"), std::string::npos) << description;
  EXPECT_EQ(lost["annotations"]["runbook"], "docs/alerts.md#gcmgpulost");
  EXPECT_EQ(lost["status"]["state"], "active") << lost.dump();
  std::string summary = lost["annotations"]["summary"];
  std::printf("Alertmanager received GcmGpuLost: %s\n  %s\n", summary.c_str(), description.c_str());

  // The drain route: after its group_wait (10 s) the webhook gets the alert.
  json posted;
  EXPECT_TRUE(eventually(
      [&] {
        std::lock_guard lock(mu);
        for (const auto& post : webhook_posts)
          for (const auto& a : post["alerts"])
            if (a["labels"].value("alertname", "") == "GcmGpuLost") {
              posted = post;
              return true;
            }
        return false;
      },
      60s))
      << am.log();
  if (!posted.is_null()) {
    EXPECT_EQ(posted["receiver"], "gcm-drain");
    EXPECT_EQ(posted["groupLabels"]["node"], "node1");
  }
  webhook.stop();
  EXPECT_EQ(agent->stop(SIGTERM, 10s), 0);
}

}  // namespace
}  // namespace gcm::testing
