// GPU -> job attribution on the live Slurm testbed (tests/testbed/): real jobs on a fake GPU node, slurmd sets
// their SLURM_JOB_GPUS, the fake NVML reports one job's real pid as a GPU process, and each source must attribute
// each GPU to the right job; the job without a GPU process is still found by slurmd-local, slurmctld and
// mapping-files. (The cgroup source needs job cgroups, which this testbed's proctrack/linuxproc does not make; it
// is tested on cgroup trees in tests/unit/attribution/attribution_test.cc.)
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "attribution/process_environ.h"
#include "attribution/slurmd_local.h"
#include "helpers.h"

namespace gcm::testing {
namespace {

using nlohmann::json;

// A batch job that sleeps on node3 with one GPU; cancelled when the object goes.
struct Job {
  int64_t id = 0;
  uint32_t pid = 0;
  std::vector<unsigned> gpus;
  explicit Job(const std::string& name) {
    std::string out = run_ok({"sbatch", "--parsable", "-w", "node3", "-p", "gpu", "--gres=gpu:1", "-J", name, "-o",
                              "/dev/null", "--wrap", "exec sleep 300"});
    id = std::stoll(out);
  }
  ~Job() {
    try {
      run_ok({"scancel", std::to_string(id)});
    } catch (...) {
    }
  }
};

TEST(AttributionOnTestbed, EverySourceAttributesEachGpuToItsJob) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  Job a("attr-a"), b("attr-b");
  // Wait until slurmd runs both batch steps and their environments carry the GPUs slurmd gave them.
  ASSERT_TRUE(eventually(
      [&] {
        std::string listing;
        try {
          listing = run_ok({"scontrol", "listpids", "*", "node3"});
        } catch (...) {
          return false;
        }
        for (Job* j : {&a, &b}) {
          j->gpus.clear();
          for (auto [pid, job] : parse_listpids(listing)) {
            if (job != j->id) continue;
            auto env = read_process_environ("/proc", pid);
            if (!env) continue;
            auto g = job_gpus_from_environ(*env);
            if (!g.empty()) {
              j->pid = pid;
              j->gpus = g;
              break;
            }
          }
          if (j->gpus.empty()) return false;
        }
        return true;
      },
      std::chrono::seconds(60)))
      << "jobs " << a.id << " and " << b.id << " did not start on node3";
  ASSERT_EQ(a.gpus.size(), 1u);
  ASSERT_EQ(b.gpus.size(), 1u);
  ASSERT_NE(a.gpus[0], b.gpus[0]);

  auto dir = temp_dir("attr-testbed");
  json gpus = json::array();
  for (unsigned i = 0; i < 2; ++i) {
    json g = {{"uuid", "GPU-node3-" + std::to_string(i)}, {"utilization", {{"gpu", 50}, {"memory", 5}}}};
    // Job a runs a process on its GPU; job b's GPU is allocated but idle (no process yet).
    g["processes"] = i == a.gpus[0] ? json::array({{{"pid", a.pid}}}) : json::array();
    gpus.push_back(g);
  }
  std::ofstream(dir + "/scenario.json") << json{{"devices", gpus}}.dump();
  std::filesystem::create_directories(dir + "/map");
  std::ofstream(dir + "/map/" + std::to_string(a.gpus[0])) << a.id << "\n";  // what the prolog writes
  std::ofstream(dir + "/map/" + std::to_string(b.gpus[0])) << b.id << "\n";
  std::vector<std::string> env = {"GCM_FAKE_NVML_SCENARIO=" + dir + "/scenario.json",
                                  std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML};

  auto jobs_by_gpu = [&](const std::string& source) {
    auto r = run_gcm({"nvml_monitor", "--once", "--push-interval", "0.1", "--collect-interval", "0.1", "--attribution",
                      source, "--slurm-node", "node3", "--gpu-job-mapping-dir", dir + "/map", "--log-folder", dir},
                     std::chrono::seconds(60), env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::map<unsigned, int64_t> out;
    std::istringstream in(r.out);
    std::string first;
    std::getline(in, first);
    for (const auto& rec : json::parse(first)) out[rec["gpu_id"].get<unsigned>()] = rec["job_id"].get<int64_t>();
    return out;
  };
  auto by_process = jobs_by_gpu("nvml-processes");
  EXPECT_EQ(by_process[a.gpus[0]], a.id);
  EXPECT_EQ(by_process[b.gpus[0]], -1) << "no process on job b's GPU, so no job from processes";
  for (const char* source : {"slurmd-local", "slurmctld", "mapping-files"}) {
    auto m = jobs_by_gpu(source);
    EXPECT_EQ(m[a.gpus[0]], a.id) << source;
    EXPECT_EQ(m[b.gpus[0]], b.id) << source << ": the idle GPU's job";
  }
  auto both = jobs_by_gpu("nvml-processes,slurmd-local");
  EXPECT_EQ(both[a.gpus[0]], a.id);
  EXPECT_EQ(both[b.gpus[0]], b.id);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcm::testing
