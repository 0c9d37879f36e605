// Test helper: one `gcm agent` on the fake NVML, in a temporary directory of its own (config, scenario, kernel log,
// mapping files, spool, run directory, logs), with /metrics read back by series prefix; and what the agent's OTLP
// requests say of the window they belong to. Shared by agent_test.cc and agent_spool_test.cc.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/http_client.h"
#include "helpers.h"
#include "process.h"

namespace gcm::testing {

using nlohmann::json;
using namespace std::chrono_literals;

inline json busy_gpu(int i) {
  return {{"uuid", "GPU-" + std::to_string(i)},
          {"pci_bus_id", "00000000:1" + std::to_string(i) + ":00.0"},
          {"utilization", {{"gpu", 97}, {"memory", 40}}},
          {"clocks", {{"sm", 1980}}},
          {"temperature", 55},
          {"power_usage", 600000},
          {"power_limit", 700000},
          {"processes", json::array()}};
}

struct AgentNode {
  std::string dir = temp_dir("agent");
  int port = free_port();
  std::string collect_interval = "0.1", window = "0.5";
  json scenario;
  std::unique_ptr<BackgroundProcess> proc;

  explicit AgentNode(int gpus) {
    scenario = {{"devices", json::array()}};
    for (int i = 0; i < gpus; ++i) scenario["devices"].push_back(busy_gpu(i));
    std::filesystem::create_directories(dir + "/gpu-jobs");
  }
  ~AgentNode() {
    proc.reset();
    std::filesystem::remove_all(dir);
  }
  std::vector<std::string> args(std::vector<std::string> extra = {}) const {
    std::vector<std::string> a = {gcm_binary(),
                                  "--config",
                                  dir + "/config.toml",
                                  "agent",
                                  "--collect-interval",
                                  collect_interval,
                                  "--window",
                                  window,
                                  "--listen",
                                  "127.0.0.1:" + std::to_string(port),
                                  "--path.run",
                                  dir + "/run",
                                  "--path.kmsg",
                                  dir + "/kmsg",
                                  "--gpu-job-mapping-dir",
                                  dir + "/gpu-jobs",
                                  "--attribution",
                                  "mapping-files",
                                  "--suite",
                                  dir + "/suite.toml",
                                  "--spool-dir",
                                  dir + "/spool",
                                  "--log-folder",
                                  dir + "/logs"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  void start(std::vector<std::string> extra = {}, std::vector<std::string> env = {}) {
    std::ofstream(dir + "/scenario.json") << scenario.dump();
    if (!std::filesystem::exists(dir + "/config.toml")) std::ofstream(dir + "/config.toml") << "[gcm.agent]\n";
    if (env.empty())
      env = {"GCM_FAKE_NVML_SCENARIO=" + dir + "/scenario.json", std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML};
    proc = std::make_unique<BackgroundProcess>(args(std::move(extra)), dir + "/agent.stderr", env);
  }
  std::string metrics() {
    HttpClient http;
    try {
      auto r = http.get("http://127.0.0.1:" + std::to_string(port) + "/metrics", 2s);
      return r.status == 200 ? r.body : "";
    } catch (const std::exception&) {
      return "";
    }
  }
  // The value of the first series whose name and labels start with `prefix` (e.g. `gcm_gpu_up{gpu="1"`).
  std::optional<double> value(const std::string& prefix) {
    std::string page = metrics();
    std::istringstream in(page);
    for (std::string line; std::getline(in, line);)
      if (line.rfind(prefix, 0) == 0) return std::stod(line.substr(line.rfind(' ') + 1));
    return std::nullopt;
  }
  std::string log() const { return read_text(dir + "/logs/agent_logs/agent.log"); }
  // `gcm prolog` in Slurm's minimal environment with one check, agent-verdict on this agent's run directory.
  CommandResult run_prolog(const std::string& extra_options = "") const {
    std::ofstream(dir + "/suite.toml") << "[suite]\ncluster = \"c\"\nlog_folder = \"" << dir
                                       << "/suite-logs\"\nstate_dir = \"" << dir << "/state\"\n"
                                       << "[prolog]\ndrain = false\n[[prolog.checks]]\nname = \"agent\"\n"
                                       << "check = \"agent-verdict\"\noptions = { path_run = \"" << dir << "/run\""
                                       << extra_options << " }\n";
    CommandSpec s;
    s.argv = {"/usr/bin/env", "-i", "SLURMD_NODENAME=node1", gcm_binary(), "prolog", "--suite", dir + "/suite.toml"};
    s.timeout = std::chrono::seconds(30);
    return run_command(s);
  }
  std::string diagnosis() const { return log().substr(0, 4000) + read_text(dir + "/agent.stderr").substr(0, 2000); }
};

// The number of the window a metrics request carries (gcm_agent_windows_total of that window), or -1.
inline int64_t window_number(const json& request) {
  if (request["signal"] != "metrics") return -1;
  for (const auto& rm : request["data"]["resourceMetrics"])
    for (const auto& sm : rm["scopeMetrics"])
      for (const auto& m : sm["metrics"])
        if (m["name"] == "gcm.agent.agent_windows") {
          const auto& v = m["sum"]["dataPoints"][0]["asInt"];
          return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>();
        }
  return -1;
}

// The value of a string resource attribute of a request as the receiver prints it (attributes as one object of
// key: value), or "" when it has none.
inline std::string resource_attribute(const json& request, const std::string& key) {
  const json& d = request["data"];
  const char* field = d.contains("resourceMetrics") ? "resourceMetrics" : "resourceLogs";
  if (!d.contains(field) || d[field].empty()) return "";
  const json& attrs = d[field][0]["resource"]["attributes"];
  if (!attrs.is_object() || !attrs.contains(key) || !attrs[key].is_string()) return "";
  return attrs[key].get<std::string>();
}

}  // namespace gcm::testing
