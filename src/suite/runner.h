// `gcm prolog`, `gcm epilog`, `gcm healthcheck`: run one profile of the suite file and act on the verdict.
//
//   1. Resolve every check of the profile (built-in checks by command path through the health-check registry,
//      their args and options parsed as `health_checks` would; external tools by argv). Any error stops here,
//      naming the entry, before anything runs.
//   2. Run them all at once under their timeouts and the profile's budget: the built-in checks on threads of one
//      child process, each external command in a process of its own (supervisor.h says why); a built-in check cut
//      short by another's overrun or crash runs again alone with the budget left.
//   3. One verdict line per check and a summary line (stdout and the log), one HealthCheckLog record per check and
//      one for the suite, the mapping files (prolog writes, epilog removes), and the node's drain state.
//   4. Exit 0 when the node may run jobs, 1 when it must not (Slurm drains the node on a failed prolog/epilog).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "suite/slurm_node.h"
#include "suite/suite_file.h"

namespace gcm::suite {

struct RunnerOptions {
  Profile profile = Profile::Prolog;
  std::string suite_path;
  std::optional<std::string> node;  // default: slurm_node_name()
  std::optional<bool> drain;        // overrides the profile's `drain`
  bool log_stdout = false;
  bool validate_only = false;  // resolve and print the plan, run nothing
  ScontrolRunner scontrol;     // tests: a fake; default: the located scontrol
};

// Exit codes of the runners.
inline constexpr int kExitPass = 0;
inline constexpr int kExitFail = 1;
inline constexpr int kExitUsage = 2;

// Runs the profile; prints verdicts to stdout and errors to stderr. Returns the exit code.
int run_profile(const RunnerOptions& opts);

// The state file that records a failure of gcm's own prolog/epilog on `node`, so that the reason Slurm sets for
// it ("Prolog error", "Epilog error") counts as gcm's: <state_dir>/<node>.failed.
std::string failure_marker_path(const std::string& state_dir, const std::string& node);

}  // namespace gcm::suite
