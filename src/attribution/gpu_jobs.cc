#include "attribution/gpu_jobs.h"

#include <charconv>
#include <fstream>
#include <stdexcept>

namespace gcm {

void check_attribution_sources(const std::vector<std::string>& sources) {
  for (const auto& s : sources)
    if (s != "nvml-processes" && s != "mapping-files")
      throw std::invalid_argument("unknown attribution source '" + s +
                                  "' (expected nvml-processes or mapping-files)");
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
                                                        const AttributionOptions& opts) {
  std::map<unsigned, std::vector<JobInfo>> out;
  for (const auto& d : devices) {
    for (const auto& source : opts.sources) {
      std::vector<JobInfo> jobs;
      if (source == "nvml-processes" && d.state == GpuState::Ok && d.sample.processes) {
        jobs = jobs_from_processes(*d.sample.processes, opts.procfs);
      } else if (source == "mapping-files" && !opts.mapping_dir.empty()) {
        if (auto j = job_from_mapping_file(opts.mapping_dir, d.index)) jobs.push_back(*j);
      }
      if (!jobs.empty()) {
        out[d.index] = std::move(jobs);
        break;
      }
    }
  }
  return out;
}

}  // namespace gcm
