#include "agent/job_attribution.h"

#include <algorithm>
#include <cstdlib>

#include <spdlog/spdlog.h>

namespace gcm::agent {

namespace {

using AttributionClock = std::chrono::steady_clock;

// Which GPUs had which processes: a change means a job started or ended.
std::string gpu_process_signature(const std::vector<DeviceResult>& results) {
  std::string sig;
  for (const auto& r : results) {
    sig += std::to_string(r.index) + ":";
    if (r.sample.processes)
      for (const auto& p : *r.sample.processes) sig += std::to_string(p.pid) + ",";
    sig += ";";
  }
  return sig;
}

}  // namespace

AttributionOptions attribution_options(const AgentOptions& opts) {
  AttributionOptions ao;
  ao.sources = opts.attribution;
  ao.procfs = opts.path_procfs;
  ao.cgroupfs = opts.path_sysfs + "/fs/cgroup";
  ao.mapping_dir = opts.gpu_job_mapping_dir;
  ao.slurm_node = opts.slurm_node;
  ao.kubelet = opts.kubelet;
  ao.kubelet.api = opts.kubernetes_api;
  if (ao.slurm_node.empty())
    if (const char* n = std::getenv("SLURMD_NODENAME")) ao.slurm_node = n;
  return ao;
}

void JobAttribution::reset(const std::string& mapping_dir) {
  mapping_watch_ = std::make_unique<DirWatch>(mapping_dir);
  attributed_at_.reset();
}

bool JobAttribution::maybe_attribute(const std::vector<DeviceResult>& results, const AgentOptions& opts,
                                     SourceStats& source) {
  std::string sig = gpu_process_signature(results);
  bool mapping_changed = mapping_watch_ && mapping_watch_->changed();
  auto since = [&] { return std::chrono::duration<double>(AttributionClock::now() - *attributed_at_).count(); };
  bool due = !attributed_at_ || since() >= opts.attribution_refresh_s || sig != process_signature_ || mapping_changed;
  if (!due) return false;
  auto t0 = AttributionClock::now();
  std::vector<std::string> errors;
  jobs_ = attribute_gpus(results, attribution_options(opts), &errors);
  source.last_duration_s = std::chrono::duration<double>(AttributionClock::now() - t0).count();
  source.up = errors.empty();
  for (const auto& e : errors) {
    source.failed(e);
    if (reported_errors_.insert(e).second) log_->warn("agent: attribution source {}", e);
  }
  attributed_at_ = AttributionClock::now();
  process_signature_ = sig;
  return true;
}

std::string JobAttribution::job_of(unsigned gpu) const {
  auto it = jobs_.find(gpu);
  if (it == jobs_.end() || it->second.empty() || !it->second.front().has_job()) return "";
  return std::to_string(it->second.front().job_id);
}

bool JobAttribution::any_pod() const {
  return std::any_of(jobs_.begin(), jobs_.end(), [](const auto& g) {
    return std::any_of(g.second.begin(), g.second.end(), [](const JobInfo& j) { return j.pod.has_value(); });
  });
}

std::map<std::string, std::string> JobAttribution::users() const {
  std::map<std::string, std::string> users;
  for (const auto& [gpu, list] : jobs_)
    for (const auto& j : list)
      if (j.has_job() && j.job_user) users[std::to_string(j.job_id)] = *j.job_user;
  return users;
}

}  // namespace gcm::agent
