// gcm agent on the live Slurm testbed (tests/testbed/: 8 slurmd on this host, 2 fake GPUs each): one agent per
// node with its own scenario; a job's GPUs are attributed by the agent of its node (through the mapping files the
// prolog writes, seen by inotify); a node whose scenario has a lost GPU fails its next prolog through agent-verdict
// and Slurm drains it, while the other nodes keep running jobs.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <thread>

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

json node_scenario(int node) {
  json s = {{"devices", json::array()}};
  for (int i = 0; i < 2; ++i)
    s["devices"].push_back({{"uuid", "GPU-n" + std::to_string(node) + "-" + std::to_string(i)},
                            {"utilization", {{"gpu", 90}, {"memory", 30}}},
                            {"ecc", {{"mode", 1}, {"volatile_corrected", 0}, {"volatile_uncorrected", 0}}},
                            {"processes", json::array()}});
  return s;
}

TEST(AgentOnTestbed, AttributesJobsPerNodeAndAFailedGpuFailsThePrologThroughAgentVerdict) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  std::string dir = temp_dir("agent-tb");
  ::chmod(dir.c_str(), 0755);
  TestbedHooks hooks("gcm-agent-tb", {"node6"});

  // One agent per node, each with its own scenario; node6's GPU 1 is lost.
  std::vector<std::unique_ptr<BackgroundProcess>> agents;
  std::map<int, int> ports;
  for (int n = 1; n <= 8; ++n) {
    json s = node_scenario(n);
    if (n == 6) s["devices"][1]["errors"] = {{"nvmlDeviceGetUtilizationRates", "GPU_IS_LOST"}};
    std::string node = "node" + std::to_string(n);
    std::ofstream(dir + "/nvml-" + node + ".json") << s.dump();
    std::filesystem::create_directories(dir + "/gpu-jobs/" + node);
    ports[n] = free_port();
    agents.push_back(start_testbed_agent(dir, node, ports[n], {"--suite", ""}));
  }
  // The prolog: agent-verdict (the agent's run directory of this node) and the mapping files the agents read.
  std::ofstream(dir + "/suite.toml") << "[suite]\nlog_folder = \"" << dir << "/logs\"\nstate_dir = \"" << dir
                                     << "/state\"\ngpu_job_mapping_dir = \"" << dir << "/gpu-jobs/{node}\"\n"
                                     << "[slurm]\nconf = \"" << std::getenv("SLURM_CONF") << "\"\n"
                                     << "[environment]\nGCM_AGENT_RUN_DIR = \"" << dir << "/run/{node}\"\n"
                                     << "[prolog]\nbudget = 10\n[[prolog.checks]]\nname = \"agent verdict\"\n"
                                     << "check = \"agent-verdict\"\n"
                                     << "[epilog]\nbudget = 10\n";
  for (const char* p : {"prolog", "epilog"}) {
    std::string path = dir + "/" + p + ".sh";
    std::ofstream(path) << "#!/bin/sh\nexec " << gcm_binary() << " " << p << " --suite " << dir << "/suite.toml\n";
    ::chmod(path.c_str(), 0755);
  }
  for (int n = 1; n <= 8; ++n)
    ASSERT_TRUE(eventually(
        [&] { return std::filesystem::exists(dir + "/run/node" + std::to_string(n) + "/agent-state.json"); }, 30s))
        << "agent of node" << n << ": " << read_text(dir + "/agent-node" + std::to_string(n) + ".stderr");
  hooks.install(dir + "/prolog.sh", dir + "/epilog.sh");

  // A job on node2: its agent attributes both GPUs to it.
  std::string job = run_ok({"sbatch", "--parsable", "-w", "node2", "-p", "gpu", "--gres=gpu:2", "-J", "gcm-agent-tb",
                            "-o", "/dev/null", "--wrap", "sleep 60"});
  job = job.substr(0, job.find_first_of(";\n"));
  HttpClient http;
  auto page = [&](int n) {
    try {
      return http.get("http://127.0.0.1:" + std::to_string(ports[n]) + "/metrics", 2s).body;
    } catch (const std::exception&) {
      return std::string();
    }
  };
  EXPECT_TRUE(eventually(
      [&] {
        std::string p = page(2);
        return p.find("gcm_gpu_job_info{gpu=\"0\",uuid=\"GPU-n2-0\",job_id=\"" + job + "\"") != std::string::npos &&
               p.find("gcm_gpu_job_info{gpu=\"1\",uuid=\"GPU-n2-1\",job_id=\"" + job + "\"") != std::string::npos;
      },
      30s))
      << page(2).substr(0, 3000);

  // A job sent to node6: the prolog fails through agent-verdict and Slurm drains the node.
  std::string bad = run_ok({"sbatch", "--parsable", "-w", "node6", "-p", "gpu", "--gres=gpu:1", "-J", "gcm-agent-tb",
                            "-o", "/dev/null", "--wrap", "true"});
  EXPECT_TRUE(eventually([&] { return slurm_node_field("node6", "State").find("DRAIN") != std::string::npos; }, 30s))
      << slurm_node_field("node6", "State");
  EXPECT_EQ(slurm_node_field("node6", "Reason").substr(0, 12), "Prolog error");
  std::string log6 = read_text(dir + "/logs/prolog_logs/node6.log");
  EXPECT_NE(log6.find("GPU 1 failed (lost)"), std::string::npos) << log6;
  // Another node still runs jobs through the same prolog.
  run_ok({"srun", "-w", "node1", "-p", "gpu", "-J", "gcm-agent-tb", "true"});

  for (auto& a : agents) EXPECT_EQ(a->stop(SIGTERM, 10s), 0);
  std::filesystem::remove_all(dir);
}

// The agent's own drain (--drain): a node whose GPU fails is drained with the detector's reason and evidence even
// with no job on it, and is not resumed while the failure, which an idle GPU can judge, holds. Without --drain the
// agent of another node with the same failure only reports what it would do.
TEST(AgentOnTestbed, WithDrainTheAgentDrainsItsNodeOnAFailedGpuAndWithoutItOnlyReports) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  std::string dir = temp_dir("agent-drain-tb");
  struct Restore {
    ~Restore() {
      // A plain try, not a function-try-block: a destructor's handler would rethrow and end the process.
      try {
        for (const char* n : {"node5", "node8"})
          if (slurm_node_field(n, "Reason").rfind("gcm: detector: ", 0) == 0)
            run_ok({"scontrol", "update", std::string("NodeName=") + n, "State=RESUME"});
      } catch (const std::exception& e) {
        ADD_FAILURE() << "restoring the testbed: " << e.what();
      }
    }
  } restore;
  std::vector<std::unique_ptr<BackgroundProcess>> agents;
  std::map<int, int> ports;
  for (int n : {5, 8}) {
    json s = node_scenario(n);
    s["devices"][1]["errors"] = {{"nvmlDeviceGetUtilizationRates", "GPU_IS_LOST"}};
    std::string node = "node" + std::to_string(n);
    std::ofstream(dir + "/nvml-" + node + ".json") << s.dump();
    ports[n] = free_port();
    std::vector<std::string> extra = {"--suite", "", "--drain-poll-interval", "1"};
    if (n == 5) extra.push_back("--drain");
    agents.push_back(start_testbed_agent(dir, node, ports[n], extra, "logs"));
  }
  HttpClient http;
  auto metrics = [&](int n) {
    try {
      return http.get("http://127.0.0.1:" + std::to_string(ports[n]) + "/metrics", 2s).body;
    } catch (const std::exception&) {
      return std::string();
    }
  };
  ASSERT_TRUE(eventually([&] { return slurm_node_field("node5", "State").find("DRAIN") != std::string::npos; }, 30s))
      << slurm_node_field("node5", "State") << "\n"
      << read_text(dir + "/logs/node5/agent_logs/agent.log");
  std::string reason = slurm_node_field("node5", "Reason");
  EXPECT_EQ(reason.rfind("gcm: detector: GPU 1 failed: ", 0), 0u) << reason;
  EXPECT_NE(reason.find("lost"), std::string::npos) << reason;
  EXPECT_TRUE(eventually(
      [&] { return metrics(8).find("gcm_agent_drain_actions_total{action=\"would_drain\"} 1") != std::string::npos; },
      30s))
      << read_text(dir + "/logs/node8/agent_logs/agent.log");
  EXPECT_EQ(slurm_node_field("node8", "State").find("DRAIN"), std::string::npos);
  // Several polls later node5 is still drained: a lost GPU is never confirmed away.
  std::this_thread::sleep_for(3s);
  EXPECT_NE(slurm_node_field("node5", "State").find("DRAIN"), std::string::npos);
  std::string m5 = metrics(5);
  EXPECT_NE(m5.find("gcm_agent_drain_actions_total{action=\"drained\"} 1"), std::string::npos) << m5;
  EXPECT_EQ(m5.find("action=\"confirm_"), std::string::npos) << m5;
  for (auto& a : agents) EXPECT_EQ(a->stop(SIGTERM, 10s), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcm::testing
