// The agent's GPU -> job attribution (attribution/gpu_jobs.h), re-resolved only when something says a job changed:
// a GPU's processes, a file of the mapping directory, or the refresh period. Re-reading cgroups and spawning
// scontrol every second would cost more than sampling.
// Owned by the sampling thread (Agent::run): nothing here is shared with another thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/agent_counters.h"
#include "agent/agent_options.h"
#include "agent/dir_watch.h"
#include "attribution/gpu_jobs.h"

namespace spdlog {
class logger;
}

namespace gcm::agent {

// The attribution's options from the agent's (SLURMD_NODENAME names the node where --slurm-node does not).
AttributionOptions attribution_options(const AgentOptions& opts);

class JobAttribution {
 public:
  explicit JobAttribution(std::shared_ptr<spdlog::logger> log) : log_(std::move(log)) {}

  // Watches `mapping_dir` (the options' --gpu-job-mapping-dir) and forgets when it last attributed: the next sample
  // attributes again. At start and after each reload.
  void reset(const std::string& mapping_dir);
  // Attributes `results` when due; the cost, success and errors go to `source` (each new error also to the log,
  // once). True when it attributed.
  bool maybe_attribute(const std::vector<DeviceResult>& results, const AgentOptions& opts, SourceStats& source);

  const std::map<unsigned, std::vector<JobInfo>>& jobs() const { return jobs_; }
  // The job id of the GPU's first job, "" when it has none.
  std::string job_of(unsigned gpu) const;
  // True when a pod holds one of the GPUs (a pod counts as a job for the drain's confirmation).
  bool any_pod() const;
  // Job id -> user, for the jobs whose user is known.
  std::map<std::string, std::string> users() const;

 private:
  std::shared_ptr<spdlog::logger> log_;
  std::map<unsigned, std::vector<JobInfo>> jobs_;
  std::optional<std::chrono::steady_clock::time_point> attributed_at_;
  std::string process_signature_;  // the GPUs' pids at the last attribution
  std::unique_ptr<DirWatch> mapping_watch_;
  std::set<std::string> reported_errors_;
};

}  // namespace gcm::agent
