#include "attribution/gpu_jobs.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <stdexcept>

#include "attribution/cgroup_jobs.h"
#include "attribution/slurmctld_jobs.h"
#include "attribution/slurmd_local.h"

namespace gcm {

namespace {

std::string short_hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  std::string h = buf;
  return h.substr(0, h.find('.'));
}

}  // namespace

void add_pods(std::vector<JobInfo>& jobs, const std::vector<PodAssignment>& pods) {
  if (pods.empty()) return;
  if (!jobs.empty()) {
    // A Slurm job's GPU given to a pod (SUNK's slurmd pod): the job keeps its metadata and gains the pod.
    for (auto& j : jobs) {
      j.pod = pods.front().pod;
      j.pod_namespace = pods.front().namespace_;
      j.container = pods.front().container;
    }
    return;
  }
  for (const auto& p : pods) {
    JobInfo j;
    j.pod = p.pod;
    j.pod_namespace = p.namespace_;
    j.container = p.container;
    jobs.push_back(std::move(j));
  }
}

const std::vector<std::string>& attribution_source_names() {
  static const std::vector<std::string> names = {"nvml-processes", "slurmd-local",  "slurmctld",
                                                 "cgroup",         "mapping-files", "kubelet"};
  return names;
}

void check_attribution_sources(const std::vector<std::string>& sources) {
  const auto& known = attribution_source_names();
  for (const auto& s : sources)
    if (std::find(known.begin(), known.end(), s) == known.end())
      throw std::invalid_argument(
          "unknown attribution source '" + s +
          "' (expected nvml-processes, slurmd-local, slurmctld, cgroup, mapping-files or kubelet)");
}

std::vector<JobInfo> jobs_from_processes(const std::vector<GpuProcess>& processes, const std::string& procfs) {
  std::vector<JobInfo> jobs;
  for (const auto& p : processes) {
    auto env = read_process_environ(procfs, p.pid);
    if (!env) continue;
    auto job = job_info_from_environ(*env);
    if (!job || !job->has_job()) continue;
    bool seen = false;
    for (const auto& j : jobs) seen |= j.job_id == job->job_id;
    if (!seen) jobs.push_back(std::move(*job));
  }
  return jobs;
}

std::optional<JobInfo> job_from_mapping_file(const std::string& dir, unsigned gpu) {
  std::ifstream in(dir + "/" + std::to_string(gpu));
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r' || text.back() == '\t')) text.pop_back();
  int64_t id = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || id < 0) return std::nullopt;
  JobInfo j;
  j.job_id = id;
  return j;
}

std::map<unsigned, std::vector<JobInfo>> attribute_gpus(const std::vector<DeviceResult>& devices,
                                                        const AttributionOptions& opts,
                                                        std::vector<std::string>* errors) {
  std::map<unsigned, std::vector<JobInfo>> out;
  auto unresolved = [&] {
    for (const auto& d : devices)
      if (!out.count(d.index)) return true;
    return false;
  };
  auto take = [&](std::map<unsigned, std::vector<JobInfo>> found) {
    for (auto& [gpu, jobs] : found)
      if (!jobs.empty() && !out.count(gpu)) out[gpu] = std::move(jobs);
  };
  for (const auto& source : opts.sources) {
    if (source == "kubelet") continue;  // below: it adds to the others' answers
    if (!unresolved()) break;
    try {
      if (source == "nvml-processes") {
        std::map<unsigned, std::vector<JobInfo>> found;
        for (const auto& d : devices)
          if (d.state == GpuState::Ok && d.sample.processes && !out.count(d.index))
            found[d.index] = jobs_from_processes(*d.sample.processes, opts.procfs);
        take(std::move(found));
      } else if (source == "slurmd-local") {
        take(attribute_slurmd_local({opts.scontrol, opts.procfs, opts.command_timeout, opts.slurm_node}));
      } else if (source == "slurmctld") {
        SlurmctldOptions so;
        so.scontrol = opts.scontrol;
        so.node = opts.slurm_node.empty() ? short_hostname() : opts.slurm_node;
        so.timeout = opts.command_timeout;
        so.cache_file = opts.slurmctld_cache_file;
        so.cache_duration = opts.slurmctld_cache_duration;
        take(attribute_slurmctld(so));
      } else if (source == "cgroup") {
        take(attribute_cgroups(devices, {opts.procfs, opts.cgroupfs}));
      } else if (source == "mapping-files" && !opts.mapping_dir.empty()) {
        std::map<unsigned, std::vector<JobInfo>> found;
        for (const auto& d : devices)
          if (auto j = job_from_mapping_file(opts.mapping_dir, d.index)) found[d.index].push_back(*j);
        take(std::move(found));
      }
    } catch (const std::exception& e) {
      if (errors) errors->push_back(source + ": " + e.what());
    }
  }
  if (std::find(opts.sources.begin(), opts.sources.end(), "kubelet") != opts.sources.end()) {
    try {
      for (auto& [gpu, pods] : attribute_kubelet(devices, opts.kubelet, errors)) add_pods(out[gpu], pods);
    } catch (const std::exception& e) {
      if (errors) errors->push_back(std::string("kubelet: ") + e.what());
    }
    for (auto it = out.begin(); it != out.end();) it = it->second.empty() ? out.erase(it) : std::next(it);
  }
  // Only GPUs this host has: a job's SLURM_JOB_GPUS may name indices that NVML does not show (a lost GPU).
  std::map<unsigned, std::vector<JobInfo>> known;
  for (const auto& d : devices)
    if (auto it = out.find(d.index); it != out.end()) known[d.index] = std::move(it->second);
  return known;
}

}  // namespace gcm
