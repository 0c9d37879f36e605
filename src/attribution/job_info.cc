#include "attribution/job_info.h"

#include <charconv>

namespace gcm {
namespace {

std::optional<std::string> get(const Environ& env, std::string_view key) {
  auto it = env.find(key);
  if (it == env.end()) return std::nullopt;
  return it->second;
}

// Python's int(): surrounding whitespace allowed, a sign, digits only. Throws on anything else.
struct BadNumber {};
std::optional<int64_t> get_int(const Environ& env, std::string_view key) {
  auto v = get(env, key);
  if (!v) return std::nullopt;
  std::string_view s = *v;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  int64_t out = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) throw BadNumber{};
  return out;
}

int64_t count_entries(const std::string& list) {
  int64_t n = 1;
  for (char c : list) n += c == ',';
  return n;
}

}  // namespace

std::optional<JobInfo> job_info_from_environ(const Environ& env) {
  try {
    JobInfo j;
    if (auto id = get_int(env, "SLURM_JOB_ID")) j.job_id = *id;
    j.job_user = get(env, "SLURM_JOB_USER");
    // Slurm sets GPU_DEVICE_ORDINAL for every GPU vendor unless gres.conf's Flags name only some variables; an AMD
    // node with Flags=amd_gpu_env has ROCR_VISIBLE_DEVICES alone (HIP_VISIBLE_DEVICES where a launcher sets it).
    j.job_gpus = get(env, "GPU_DEVICE_ORDINAL");
    for (const char* amd : {"ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"})
      if (!j.job_gpus) j.job_gpus = get(env, amd);
    if (auto g = get(env, "SLURM_JOB_GPUS"))
      j.job_num_gpus = count_entries(*g);
    else
      j.job_num_gpus = get_int(env, "SLURM_GPUS");
    j.job_num_cpus = get_int(env, "SLURM_CPUS_ON_NODE");
    j.job_name = get(env, "SLURM_JOB_NAME");
    j.job_partition = get(env, "SLURM_JOB_PARTITION");
    j.job_num_nodes = get_int(env, "SLURM_NNODES");
    j.job_account = get(env, "SLURM_JOB_ACCOUNT");
    j.job_qos = get(env, "SLURM_JOB_QOS");
    j.array_job_id = get_int(env, "SLURM_ARRAY_JOB_ID");
    j.array_task_id = get_int(env, "SLURM_ARRAY_TASK_ID");
    if (j.job_num_cpus && j.job_num_gpus && *j.job_num_cpus != 0 && *j.job_num_gpus != 0)
      j.job_cpus_per_gpu = static_cast<double>(*j.job_num_cpus) / static_cast<double>(*j.job_num_gpus);
    // The reference asserts that both GPU lists agree and discards the result when they do not.
    int64_t listed = j.job_gpus ? count_entries(*j.job_gpus) : 0;
    if (j.job_num_gpus.value_or(0) != listed) return std::nullopt;
    return j;
  } catch (const BadNumber&) {
    return std::nullopt;
  }
}

}  // namespace gcm
