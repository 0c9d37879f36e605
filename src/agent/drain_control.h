// The agent's action on its verdicts (`--drain`, and on Kubernetes `--kubernetes-condition`): drain the node when a GPU
// is degraded or failed, so the running job finishes and no new job lands; resume a node the detector drained once it
// is idle, its GPUs show no reason idle windows can judge, and the suite's [confirm] profile (e.g. `dcgmi diag -r 2`,
// which loads the GPUs) passes. A drain by `gcm drainer` (a cross-node verdict) is resumed the same way: the agent of
// the node is the only one that can run the confirmation on it.
//
// Without --drain it reports only: the first window of each episode logs what it would have done. Everything that
// talks to slurmctld or runs a check runs on a worker thread, one task at a time, so a slow slurmctld or a long
// diagnostic never delays a window.
#pragma once

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "detector/verdict.h"
#include "kubernetes/access_options.h"
#include "kubernetes/node_health.h"
#include "suite/detector_drain.h"

namespace spdlog {
class logger;
}

namespace gcm::agent {

struct DrainControlOptions {
  bool drain = false;  // off: report only
  std::string node;    // the Slurm node name
  suite::DrainLimits limits;
  double poll_interval_s = 300;           // how often an idle node asks slurmctld whether the detector's drain is on it
  double retry_s = 60;                    // after a drain that failed (slurmctld down) or a limit refused
  std::string suite_path;                 // its [confirm] profile confirms before a resume
  std::optional<std::string> scontrol;    // default: PATH, then the usual places
  std::optional<std::string> slurm_conf;  // default: $SLURM_CONF, then the usual places
  double slurm_timeout_s = 10;
  // --kubernetes-condition: the Kubernetes node is marked (kubernetes/node_health.h) where the Slurm node would be
  // drained, and cleared after the same confirmation. Without --drain the Slurm side is then left out entirely (a
  // Kubernetes node without Slurm).
  bool kubernetes = false;
  kube::NodeHealthOptions kubernetes_node;  // its limits are `limits`
  kube::AccessOptions kubernetes_api;
};

class DrainControl {
 public:
  DrainControl(DrainControlOptions opts, std::shared_ptr<spdlog::logger> log);
  ~DrainControl();  // waits for a task in flight (bounded by scontrol's and the checks' timeouts)

  // Once per window, on the agent's thread; never blocks. `node_has_job`: a job is attributed to a GPU.
  // Returns true when a confirmation passed since the last call: the caller then forgives the detector's
  // load-only reasons (the GPUs were judged under load by the confirmation).
  bool on_window(const std::vector<detector::GpuVerdict>& verdicts, bool node_has_job);

  // Counts by action (suite::to_string(DrainAction), confirm_passed, confirm_failed, resumed).
  std::map<std::string, uint64_t> counts() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct TaskResult {
    std::vector<std::string> actions;  // counted
    bool drained = false;              // this task drained the node
    bool confirmed = false;
    bool failed = false;
    bool drain_again = false;  // a drain that did not happen (slurmctld down, a limit said no): asked again later
  };
  bool collect();
  void start(std::function<TaskResult()> task);
  TaskResult drain_task(std::string evidence);
  void kubernetes_mark(TaskResult& r, const std::string& evidence);
  TaskResult resume_task();
  suite::ScontrolRunner scontrol() const;

  DrainControlOptions opts_;
  std::shared_ptr<spdlog::logger> log_;
  std::future<TaskResult> task_;
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> counts_;
  bool episode_handled_ = false;  // a drain was decided (sent, refused or reported) for the current bad episode
  std::optional<Clock::time_point> last_poll_, last_failure_;
};

// "GPU 1 degraded: peer_slow: sm_clock 30 % below ...; GPU 2 failed: lost": the worst GPUs first, one line.
std::string drain_evidence(const std::vector<detector::GpuVerdict>& verdicts);

}  // namespace gcm::agent
