// What the state file (agent_state.h) says after a window: each GPU's presence, health, reasons and active XIDs,
// the node's own reasons, each check's last result, and the node's problems one sentence each, for the prolog's
// agent-verdict check and `gcm agent status`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agent/agent_state.h"
#include "agent/check_runner.h"
#include "agent/xid_tracker.h"
#include "detector/detector.h"

namespace gcm::agent {

struct WindowFacts {
  int64_t end_unix_ms = 0;
  double window_s = 30;
  std::string hostname;
  std::string driver_version;
  std::string nvml_error;            // "" while the GPU library works
  std::string gpu_library = "NVML";  // which library nvml_error is about: "NVML" or "amdsmi"
};

// `verdicts[i]` judges `summaries[i]`; the XIDs active at the window's end come from `xids`.
AgentState window_state(const WindowFacts& facts, const std::map<std::string, CheckResult>& checks,
                        const std::vector<detector::GpuWindow>& summaries,
                        const std::vector<detector::GpuVerdict>& verdicts, const XidTracker& xids,
                        const std::vector<NodeStateEntry>& node);

}  // namespace gcm::agent
