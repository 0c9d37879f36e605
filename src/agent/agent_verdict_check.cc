// health_checks agent-verdict: the prolog's view of what `gcm agent` saw. It reads the agent's state file instead
// of asking NVML again, so a node whose GPU failed or degraded during the last job fails the next prolog in well
// under a millisecond with the agent's reason; a missing or stale file (the agent is not running) is a WARNING.
// With --npd it is a node-problem-detector custom plugin instead (its exit codes, the same line).
#include <chrono>
#include <cstdlib>

#include "agent/agent_state.h"
#include "core/clock.h"
#include "cli/option_binder.h"
#include "core/host_roots.h"
#include "health/check.h"

namespace gcm::health {
namespace {

class AgentVerdict : public HealthCheck {
 public:
  explicit AgentVerdict(OptionBinder& b) {
    add_host_root_option(b, kRunRoot, run_dir_,
                         "The agent's --path.run: where agent-state.json is (default: $GCM_AGENT_RUN_DIR, else "
                         "/run/gcm; a suite's [environment] can set that variable per node with {node}).",
                         false);
    b.option("--stale-windows", "stale_windows", stale_windows_,
             "A state file older than this many of the agent's windows means the agent is not running: WARNING, "
             "never a failure.")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 1e6));
    b.flag("--npd", "npd", npd_,
           "Exit as a node-problem-detector custom plugin: 0 OK, 1 a GPU failed or degraded (NonOK: NPD sets its "
           "condition), 2 the agent's verdict is unknown (state file missing or stale); the stdout line is the "
           "condition's message (use with --verbose-out).");
  }

  int run(CheckRun& r) override {
    int code = r.run_standard("agent verdict", "disable_agent_verdict", [&]() -> CheckOutcome {
      // Read when the check runs, not when it is set up: the suite runner sets its [environment] in between.
      std::string dir = run_dir_;
      if (dir.empty())
        if (const char* env = std::getenv("GCM_AGENT_RUN_DIR"); env && *env) dir = env;
      if (dir.empty()) dir = "/run/gcm";
      std::string path = dir + "/agent-state.json";
      std::optional<agent::AgentState> state;
      try {
        state = agent::read_agent_state(path);
      } catch (const std::exception& e) {
        return {ExitCode::WARN, std::string("WARNING: ") + e.what() + "; not failing the node for it"};
      }
      agent::StateVerdict v = agent::judge_agent_state(state, unix_ms_now(), path, stale_windows_);
      return {*exit_code_from_int(v.code), v.message};
    });
    return npd_ ? agent::npd_exit_code(code) : code;
  }

 private:
  std::string run_dir_;  // empty: $GCM_AGENT_RUN_DIR, else /run/gcm
  double stale_windows_ = 3;
  bool npd_ = false;
};

const bool kAgentVerdictCheckRegistered = register_health_check({
    {"agent-verdict"},
    "The verdict of `gcm agent` on this node's GPUs, from its state file: CRITICAL when a GPU is failed or "
    "degraded (with the agent's reasons), WARNING when the agent is not running (state file missing or stale), "
    "else OK.",
    false,
    [](OptionBinder& b) -> std::unique_ptr<HealthCheck> { return std::make_unique<AgentVerdict>(b); },
});

}  // namespace
}  // namespace gcm::health
