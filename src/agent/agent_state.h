// The agent's state file (<path.run>/agent-state.json): each GPU's health and the node's active problems, replaced
// atomically after every window. The prolog's `agent-verdict` check and `gcm agent status` read it, so a job start
// learns what the agent saw during the last job without asking NVML again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gcm::agent {

// GPU health states (gcm_gpu_health_state): a contract shared with the detector, dashboards and alert rules.
enum class Health { Ok = 0, Suspect = 1, Degraded = 2, Failed = 3 };
const char* to_string(Health h);
std::optional<Health> health_from_string(const std::string& s);

struct GpuStateEntry {
  unsigned gpu = 0;
  std::string uuid;
  Health health = Health::Ok;
  std::string presence = "ok";       // ok, not_responding, lost, error
  std::string job_id;                // "" when no job
  std::vector<std::string> reasons;  // the detector's vocabulary (xid, lost, peer_slow, ...)
  std::string evidence;              // one line a person can act on
  std::vector<int> active_xids;
};

// One of the node's own problems (agent/node_health.h): a reason of detector::NodeReason's vocabulary.
struct NodeStateEntry {
  std::string reason;
  Health health = Health::Ok;
  std::string evidence;
  int64_t since_unix_ms = 0;
};

// A rank of a job reporting its steps to the agent (docs/reference/job-signals.md), as the last window judged it.
struct RankStateEntry {
  std::string job_id;
  int64_t rank = -1;
  int gpu = -1;
  std::string signal;  // "compute" or "collective": what was compared ("" when nothing was)
  double seconds = 0;  // the rank's median compute (or mean collective) time in the window; 0: none
  std::string judgement;  // "slow", "clean" or "held" (not judged: warm-up, too few ranks)
};

struct CheckStateEntry {
  std::string name;
  int code = 3;  // Nagios: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN
  std::string message;
  int64_t finished_unix_ms = 0;
};

struct AgentState {
  int version = 1;
  int64_t written_unix_ms = 0;
  double window_seconds = 30;
  std::string hostname;
  std::string driver_version;
  std::string nvml_error;            // why the GPU library is not in use ("" when it is); the key predates amdsmi
  std::string gpu_library = "NVML";  // the library the agent samples through (or failed to load): NVML, amdsmi
  std::vector<GpuStateEntry> gpus;
  std::vector<NodeStateEntry> node;  // the node's own problems that hold (none: empty)
  std::vector<CheckStateEntry> checks;
  std::vector<RankStateEntry> ranks;  // the job-signal ranks of the last window, by job and rank
  std::vector<std::string> problems;  // the node's active problems, one sentence each
};

std::string to_json(const AgentState& s);
// Throws std::runtime_error naming `source` and what is wrong.
AgentState parse_agent_state(const std::string& text, const std::string& source);

// Replaces `path` atomically (a temporary file in the same directory, renamed over it; mode 0644: the state is not
// secret and `gcm agent status` runs as any user). Creates the directory (0755). Throws std::runtime_error.
void write_agent_state(const std::string& path, const AgentState& s);
// Reads the file, refusing one another user could have planted (owned by neither root nor us, or writable by
// others). Throws std::runtime_error naming the path; ENOENT gives std::nullopt.
std::optional<AgentState> read_agent_state(const std::string& path);

// What the prolog makes of the state. A failed or degraded GPU, or node reason, is CRITICAL with the agent's reason; a state older
// than `stale_after_ms` (the agent died) or missing is a WARNING, never a failure: a node is not drained because its
// monitor stopped.
struct StateVerdict {
  int code = 0;  // Nagios
  std::string message;
};
StateVerdict judge_agent_state(const std::optional<AgentState>& s, int64_t now_unix_ms, const std::string& path,
                               double stale_windows = 3);

// A Nagios code (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN) as node-problem-detector's custom plugins exit: 0 OK,
// 1 NonOK (the problem is there), 2 Unknown. A WARNING of agent-verdict means the agent's verdict is unknown.
int npd_exit_code(int nagios_code);

}  // namespace gcm::agent
