// The agent's drain and resume (agent/drain_control.h; report only without --drain): the options it is built with,
// from the agent's and the suite file's, and what each window's verdicts make it do.
// Owned by the sampling thread (Agent::run); DrainControl runs its tasks on its own thread.
#pragma once

#include <memory>
#include <vector>

#include "agent/agent_options.h"
#include "agent/drain_control.h"
#include "agent/window_export.h"
#include "detector/detector.h"

namespace spdlog {
class logger;
}

namespace gcm::agent {

// The drain's options: the agent's, with scontrol, slurm.conf, its timeout and the reason's length from the suite
// file where it loads; the Slurm node from --slurm-node or the host, the Kubernetes node from --kubelet-node-name or
// $NODE_NAME.
DrainControlOptions drain_control_options(const AgentOptions& opts);

class AgentDrain {
 public:
  explicit AgentDrain(std::shared_ptr<spdlog::logger> log) : log_(std::move(log)) {}

  // (Re)builds the drain control from `opts` (at start and after each reload; waits for a task in flight).
  void load(const AgentOptions& opts);
  // The window's verdicts to the drain control; `node_has_job`: a job or a pod holds a GPU (no confirmation runs
  // under it). A confirmation that passed forgives the detector's load-only reasons. The counts by action are
  // published as gcm_agent_drain_actions_total.
  void on_window(const std::vector<detector::GpuVerdict>& verdicts, bool node_has_job, detector::Detector& detector,
                 WindowExport& out);

 private:
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<DrainControl> drain_;
};

}  // namespace gcm::agent
