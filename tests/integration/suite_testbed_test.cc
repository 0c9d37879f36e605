// gcm prolog / epilog / healthcheck as Slurm's Prolog=, Epilog= and HealthCheckProgram= on the live testbed
// (tests/testbed/, 8 slurmd on this host, 2 fake GPUs each from a fake NVML scenario per node):
//   - an uncorrectable ECC error on node3: the job sent there is requeued held, node3 is drained (Slurm's "Prolog
//     error", which the next health check turns into gcm's reason), other nodes keep running jobs;
//   - the scenario healed: the health check resumes node3 and the released job runs;
//   - a node drained by hand with another reason stays drained;
//   - a check that hangs is killed at its timeout and named in the reason;
//   - the prolog writes the GPU -> job mapping files and the epilog removes them.
// The hooks go into the testbed's hooks.conf (included by slurm.conf) and `scontrol reconfigure`; the previous
// hooks.conf is put back at the end.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "helpers.h"
#include "suite/slurm_node.h"

namespace gcm::testing {
namespace {

using nlohmann::json;
using std::chrono::seconds;

json gpu(int i) {
  return {{"uuid", "GPU-tb-" + std::to_string(i)},
          {"ecc", {{"mode", 1}, {"volatile_corrected", 0}, {"volatile_uncorrected", 0}}},
          {"processes", json::array()}};
}

std::string node_field(const std::string& node, const std::string& key) {
  std::string out = run_ok({"scontrol", "show", "node", node});
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    size_t b = line.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    line = line.substr(b);
    if (line.rfind(key + "=", 0) == 0) {
      std::string v = line.substr(key.size() + 1);
      if (key == "State") v = v.substr(0, v.find(' '));
      return v;
    }
  }
  return "";
}

std::string job_field(const std::string& id, const std::string& key) {
  std::string out = run_ok({"scontrol", "-o", "show", "job", id});
  size_t p = out.find(" " + key + "=");
  if (p == std::string::npos) return "";
  p += key.size() + 2;
  return out.substr(p, out.find(' ', p) - p);
}

class SuiteOnTestbed : public ::testing::Test {
 protected:
  static inline std::string dir, hooks, saved_hooks;
  static inline bool up = false;

  static void write_scenario(const std::string& node, const json& s) {
    std::ofstream(dir + "/nvml-" + node + ".json.tmp") << s.dump();
    std::filesystem::rename(dir + "/nvml-" + node + ".json.tmp", dir + "/nvml-" + node + ".json");
  }
  static json healthy() { return {{"devices", json::array({gpu(0), gpu(1)})}}; }

  static void set_hooks(bool healthcheck) {
    std::ofstream h(hooks);
    h << "Prolog=" << dir << "/prolog.sh\nEpilog=" << dir << "/epilog.sh\n";
    if (healthcheck)
      h << "HealthCheckProgram=" << dir << "/healthcheck.sh\nHealthCheckInterval=2\n"
        << "HealthCheckNodeState=ANY\n";
    h.close();
    reconfigure_testbed();
    ASSERT_TRUE(eventually(
        [&] {
          std::string c = run_ok({"scontrol", "show", "config"});
          bool has = c.find(dir + "/healthcheck.sh") != std::string::npos;
          return c.find(dir + "/prolog.sh") != std::string::npos && has == healthcheck;
        },
        seconds(20)));
  }

  static void SetUpTestSuite() {
    up = testbed_up();
    if (!up) return;
    dir = temp_dir("suite-tb");
    ::chmod(dir.c_str(), 0755);
    hooks = std::filesystem::path(std::getenv("SLURM_CONF")).parent_path().string() + "/hooks.conf";
    saved_hooks = read_text(hooks);
    for (int i = 1; i <= 8; ++i) write_scenario("node" + std::to_string(i), healthy());
    // Slurm runs the hooks without PATH, where the suite would find the system's scontrol: a testbed on another
    // Slurm (GCM_TESTBED_SLURM) names its own, as a site with Slurm outside /usr does ([slurm] scontrol).
    const std::string scontrol = gcm::suite::locate_scontrol(std::nullopt).value_or("scontrol");
    std::string checks = R"(
[[{p}.checks]]
name = "gpu count"
check = "check-nvidia-smi"
args = ["-c", "gpu_num", "--gpu_num", "2"]
[[{p}.checks]]
name = "gpu memory errors"
check = "check-nvidia-smi"
args = ["-c", "ecc_uncorrected_volatile_total", "--nvml-timeout", "600"]
timeout = 2
)";
    auto profile = [&](const std::string& p) {
      std::string c = checks;
      for (size_t k; (k = c.find("{p}")) != std::string::npos;) c.replace(k, 3, p);
      return c;
    };
    std::ofstream(dir + "/suite.toml") << "[suite]\nlog_folder = \"" << dir << "/logs\"\nstate_dir = \"" << dir
                                       << "/state\"\n"
                                       << "gpu_job_mapping_dir = \"" << dir << "/gpu-jobs/{node}\"\n"
                                       << "[slurm]\nconf = \"" << std::getenv("SLURM_CONF") << "\"\nscontrol = \""
                                       << scontrol << "\"\n"
                                       << "[environment]\nGCM_FAKE_NVML_SCENARIO = \"" << dir
                                       << "/nvml-{node}.json\"\nGCM_NVML_LIBRARY = \"" << GCM_FAKE_NVML
                                       << "\"\nGCM_GPU_NODE_ID_FILE = \"" << dir << "/gpu_node_id-{node}\"\n"
                                       << "[prolog]\nbudget = 10\n"
                                       << profile("prolog") << "[epilog]\nbudget = 10\n"
                                       << profile("epilog") << "[healthcheck]\nbudget = 8\n"
                                       << profile("healthcheck");
    // Slurm runs these with no arguments, no PATH and (HealthCheckProgram) no SLURM_CONF.
    for (const char* p : {"prolog", "epilog", "healthcheck"}) {
      std::string path = dir + "/" + p + ".sh";
      std::ofstream(path) << "#!/bin/sh\nexec " << gcm_binary() << " " << p << " --suite " << dir << "/suite.toml\n";
      ::chmod(path.c_str(), 0755);
    }
  }

  static void TearDownTestSuite() {
    if (!up) return;
    std::ofstream(hooks) << saved_hooks;
    try {
      reconfigure_testbed();
      run_ok({"scancel", "--name=gcm-suite-tb"});
      for (const char* n : {"node3", "node4", "node5"}) {
        if (node_field(n, "State").find("DRAIN") != std::string::npos)
          run_ok({"scontrol", "update", std::string("NodeName=") + n, "State=RESUME"});
      }
    } catch (const std::exception& e) {
      ADD_FAILURE() << "restoring the testbed: " << e.what();
    }
    std::filesystem::remove_all(dir);
  }

  void SetUp() override {
    if (!up) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  }
};

std::string submit(const std::string& node, const std::string& what, int gpus = 1) {
  std::string out =
      run_ok({"sbatch", "--parsable", "-w", node, "-p", node == "node7" ? "debug" : "gpu",
              "--gres=gpu:" + std::to_string(gpus), "-J", "gcm-suite-tb", "-o", "/dev/null", "--wrap", what});
  return out.substr(0, out.find_first_of(";\n"));
}

TEST_F(SuiteOnTestbed, EccErrorDrainsAndRequeuesHealingResumesAndHandDrainsAndTimeouts) {
  // 1. Prolog and epilog only: node3's job fails its prolog.
  set_hooks(false);
  json bad = healthy();
  bad["devices"][1]["ecc"]["volatile_uncorrected"] = 1;
  write_scenario("node3", bad);
  std::string job = submit("node3", "true");
  ASSERT_TRUE(eventually([&] { return node_field("node3", "State").find("DRAIN") != std::string::npos; }, seconds(30)))
      << node_field("node3", "State");
  EXPECT_EQ(node_field("node3", "Reason").substr(0, 12), "Prolog error");
  // Slurm gives the held reason while the requeued job is still COMPLETING (its epilog runs), then PENDING: wait
  // for both rather than reading the state in between.
  ASSERT_TRUE(eventually(
      [&] {
        return job_field(job, "Reason") == "launch_failed_requeued_held" && job_field(job, "JobState") == "PENDING";
      },
      seconds(30)))
      << "job " << job << ": " << job_field(job, "JobState") << " " << job_field(job, "Reason");
  EXPECT_NE(read_text(dir + "/logs/prolog_logs/node3.log").find("gpu memory errors"), std::string::npos);
  // Other nodes keep running jobs, through the same prolog.
  run_ok({"srun", "-w", "node1", "-p", "gpu", "-J", "gcm-suite-tb", "true"});

  // 2. The periodic health check makes the reason gcm's (the drain came from gcm's own prolog).
  set_hooks(true);
  ASSERT_TRUE(
      eventually([&] { return node_field("node3", "Reason").rfind("gcm: gpu memory errors: ", 0) == 0; }, seconds(30)))
      << node_field("node3", "Reason");
  EXPECT_NE(node_field("node3", "Reason").find("GPU 1: 1 volatile ECC errors"), std::string::npos);

  // 3. A node drained by hand for another reason: the passing health check leaves it alone.
  run_ok({"scontrol", "update", "NodeName=node5", "State=DRAIN", "Reason=maintenance by hand"});
  std::string log5 = dir + "/logs/healthcheck_logs/node5.log";
  ASSERT_TRUE(eventually([&] { return read_text(log5).find("not resuming") != std::string::npos; }, seconds(30)));

  // 4. A hanging NVML call on node4: killed at the check's 2 s timeout, named in the reason.
  json hung = healthy();
  hung["devices"][0]["delays"] = {{"nvmlDeviceGetTotalEccErrors", {{"hang", true}}}};
  write_scenario("node4", hung);
  ASSERT_TRUE(eventually([&] { return node_field("node4", "Reason").rfind("gcm: ", 0) == 0; }, seconds(30)))
      << node_field("node4", "Reason");
  EXPECT_EQ(node_field("node4", "Reason").rfind("gcm: gpu memory errors: timed out: killed after its 2 s timeout [", 0),
            0u)
      << node_field("node4", "Reason");

  // 5. Healed: node3 and node4 are resumed by the health check and the held job runs.
  write_scenario("node3", healthy());
  write_scenario("node4", healthy());
  ASSERT_TRUE(eventually([&] { return node_field("node3", "State").find("DRAIN") == std::string::npos; }, seconds(30)))
      << node_field("node3", "State") << " " << node_field("node3", "Reason");
  ASSERT_TRUE(eventually([&] { return node_field("node4", "State").find("DRAIN") == std::string::npos; }, seconds(30)));
  run_ok({"scontrol", "release", job});
  // Slurm delays a requeued job (Reason=BeginTime); the operator who released it lets it start now.
  run_ok({"scontrol", "update", "JobId=" + job, "StartTime=now"});
  ASSERT_TRUE(eventually([&] { return job_field(job, "JobState") == "COMPLETED"; }, seconds(60)))
      << job_field(job, "JobState") << " " << job_field(job, "Reason");
  // node5 is still drained with its own reason after all those health checks.
  EXPECT_NE(node_field("node5", "State").find("DRAIN"), std::string::npos);
  EXPECT_EQ(node_field("node5", "Reason").substr(0, 19), "maintenance by hand");
  run_ok({"scontrol", "update", "NodeName=node5", "State=RESUME"});
}

TEST_F(SuiteOnTestbed, PrologWritesTheJobsGpuMappingAndEpilogRemovesIt) {
  set_hooks(false);
  std::string job = submit("node2", "sleep 60", 2);
  std::string d = dir + "/gpu-jobs/node2";
  ASSERT_TRUE(
      eventually([&] { return read_text(d + "/0") == job + "\n" && read_text(d + "/1") == job + "\n"; }, seconds(30)))
      << job_field(job, "JobState");
  run_ok({"scancel", job});
  ASSERT_TRUE(eventually([&] { return !std::filesystem::exists(d + "/0") && !std::filesystem::exists(d + "/1"); },
                         seconds(30)));
}

}  // namespace
}  // namespace gcm::testing
