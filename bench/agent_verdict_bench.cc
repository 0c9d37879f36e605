// What the prolog's agent-verdict check costs in-process, on a real state file of 8 GPUs written by the agent's own
// writer (agent/agent_state.h): the whole check as the suite runner runs it (registry, options, killswitch,
// verdict), against two baselines measured in the same run: reading the file's bytes (the I/O floor) and
// read_agent_state alone (the bytes plus the JSON parse and the file's ownership checks). Two states: a healthy node
// (OK) and one whose GPU 3 failed (CRITICAL, the message built from the agent's reasons).
// scripts/bench-agent.sh prints the figures and ratios, and the whole-process cost against /bin/true.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <benchmark/benchmark.h>

#include "agent/agent_state.h"
#include "cli/option_binder.h"
#include "health/check.h"

namespace {

using gcm::agent::AgentState;
using gcm::agent::GpuStateEntry;
using gcm::agent::Health;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// What an 8-GPU node's agent writes after a window: every GPU in one job, one check, and (failed_gpu >= 0) a GPU
// the detector failed for XID 79.
AgentState node_state(int failed_gpu) {
  AgentState s;
  s.written_unix_ms = now_ms();  // fresh for the run: the check's staleness rule allows 3 windows of 30 s
  s.hostname = "gpu-node-0042";
  s.driver_version = "580.159.04";
  for (unsigned i = 0; i < 8; ++i) {
    GpuStateEntry g;
    g.gpu = i;
    g.uuid = "GPU-0000000" + std::to_string(i) + "-1111-2222-3333-44445555000" + std::to_string(i);
    g.job_id = "4242";
    g.evidence = "sm_clock -0.4 % of the job's peers (z -0.3); power 612 W of 700 W";
    if (static_cast<int>(i) == failed_gpu) {
      g.health = Health::Failed;
      g.presence = "lost";
      g.reasons = {"xid", "lost"};
      g.active_xids = {79};
      g.evidence = "XID 79 (RESTART_BM) at 12:03:04; the GPU does not answer NVML";
    }
    s.gpus.push_back(std::move(g));
  }
  s.checks.push_back({"disk", 0, "OK: /scratch 41 % used", now_ms()});
  if (failed_gpu >= 0) s.problems.push_back("GPU " + std::to_string(failed_gpu) + " failed: XID 79");
  return s;
}

// A run directory holding the state file, removed at exit.
struct RunDir {
  std::string path;
  explicit RunDir(int failed_gpu) {
    char tmpl[] = "/tmp/gcm-verdict-bench-XXXXXX";
    path = ::mkdtemp(tmpl);
    gcm::agent::write_agent_state(path + "/agent-state.json", node_state(failed_gpu));
  }
  ~RunDir() { std::filesystem::remove_all(path); }
};

const RunDir& healthy() {
  static RunDir d(-1);
  return d;
}
const RunDir& failed() {
  static RunDir d(3);
  return d;
}

void BM_BaselineReadFileBytes(benchmark::State& state) {
  std::string path = healthy().path + "/agent-state.json";
  for (auto _ : state) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    benchmark::DoNotOptimize(text.str());
  }
  state.SetLabel(std::to_string(std::filesystem::file_size(path)) + " bytes");
}
BENCHMARK(BM_BaselineReadFileBytes)->Unit(benchmark::kMicrosecond);

void BM_ReadAgentState(benchmark::State& state) {
  std::string path = healthy().path + "/agent-state.json";
  for (auto _ : state) benchmark::DoNotOptimize(gcm::agent::read_agent_state(path));
}
BENCHMARK(BM_ReadAgentState)->Unit(benchmark::kMicrosecond);

// The check through the registry, set up once (as the suite runner prepares it) and run each iteration.
void run_check(benchmark::State& state, const RunDir& dir, int expected_code) {
  const gcm::health::HealthCheckSpec* spec = nullptr;
  for (const auto& s : gcm::health::health_check_registry())
    if (s.path == std::vector<std::string>{"agent-verdict"}) spec = &s;
  if (!spec) {
    state.SkipWithError("agent-verdict is not registered");
    return;
  }
  CLI::App app("agent-verdict");
  gcm::OptionBinder binder(app);
  auto check = spec->setup(binder);
  std::vector<std::string> args = {dir.path, "--path.run"};  // CLI11 takes the arguments reversed
  app.parse(args);
  int code = -1;
  for (auto _ : state) {
    gcm::health::CheckRun run;
    run.cluster = "bench";
    run.on_output = [&](const std::string&, const gcm::health::CheckOutcome& o) { code = static_cast<int>(o.code); };
    benchmark::DoNotOptimize(check->run(run));
  }
  if (code != expected_code) state.SkipWithError(("unexpected verdict " + std::to_string(code)).c_str());
}

void BM_AgentVerdictCheckHealthyNode(benchmark::State& state) { run_check(state, healthy(), 0); }
BENCHMARK(BM_AgentVerdictCheckHealthyNode)->Unit(benchmark::kMicrosecond);

void BM_AgentVerdictCheckFailedGpu(benchmark::State& state) { run_check(state, failed(), 2); }
BENCHMARK(BM_AgentVerdictCheckFailedGpu)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
