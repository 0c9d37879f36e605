#include "attribution/slurmd_local.h"

#include <charconv>
#include <set>
#include <stdexcept>

#include "attribution/gpu_list.h"
#include "core/subprocess.h"

namespace gcm {
namespace {

template <typename T>
bool parse_int(std::string_view s, T* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

std::vector<std::pair<uint32_t, int64_t>> parse_listpids(std::string_view output) {
  std::vector<std::pair<uint32_t, int64_t>> rows;
  size_t i = 0;
  while (i < output.size()) {
    size_t j = output.find('\n', i);
    if (j == std::string_view::npos) j = output.size();
    auto f = fields(output.substr(i, j - i));
    uint32_t pid = 0;
    int64_t job = 0;
    if (f.size() >= 2 && parse_int(f[0], &pid) && parse_int(f[1], &job) && job >= 0) rows.emplace_back(pid, job);
    i = j + 1;
  }
  return rows;
}

std::vector<unsigned> job_gpus_from_environ(const Environ& env) {
  // Only Slurm's own lists name physical indices: GPU_DEVICE_ORDINAL and CUDA_VISIBLE_DEVICES are renumbered from 0
  // inside a job whose devices are constrained (ConstrainDevices), which would put the job on the wrong GPUs.
  for (const char* key : {"SLURM_JOB_GPUS", "SLURM_STEP_GPUS"}) {
    auto it = env.find(key);
    if (it == env.end()) continue;
    auto gpus = parse_gpu_index_list(it->second);
    if (!gpus.empty()) return gpus;
  }
  return {};
}

std::map<unsigned, std::vector<JobInfo>> attribute_slurmd_local(const SlurmdLocalOptions& opts) {
  CommandSpec spec;
  spec.argv = {opts.scontrol, "listpids"};
  if (!opts.node.empty()) spec.argv.insert(spec.argv.end(), {"*", opts.node});
  spec.timeout = opts.timeout;
  CommandResult r = run_command(spec);
  if (!r.ok()) throw std::runtime_error(describe_failure(spec, r));
  std::map<unsigned, std::vector<JobInfo>> out;
  std::set<int64_t> done;
  // Several pids per job: try them in order until one has a readable environment with the job's GPUs (the job's
  // processes may belong to another user, or have exited since listpids ran).
  std::map<int64_t, std::vector<uint32_t>> pids_by_job;
  std::vector<int64_t> order;
  for (auto [pid, job] : parse_listpids(r.out)) {
    if (!pids_by_job.count(job)) order.push_back(job);
    pids_by_job[job].push_back(pid);
  }
  for (int64_t job : order) {
    for (uint32_t pid : pids_by_job[job]) {
      auto env = read_process_environ(opts.procfs, pid);
      if (!env) continue;
      auto gpus = job_gpus_from_environ(*env);
      if (gpus.empty()) continue;
      // The reference's consistency check may reject the environment; the job and its GPUs are still known.
      JobInfo info = job_info_from_environ(*env).value_or(JobInfo{});
      if (!info.job_user)
        if (auto u = env->find("SLURM_JOB_USER"); u != env->end()) info.job_user = u->second;
      info.job_id = job;  // listpids is authoritative for the id (an environ may come from a nested srun)
      for (unsigned g : gpus) out[g].push_back(info);
      break;
    }
  }
  return out;
}

}  // namespace gcm
