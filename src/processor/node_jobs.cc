#include "processor/node_jobs.h"

#include <algorithm>
#include <set>

namespace gcm::processor {

namespace {

std::string opt_text(const std::optional<std::string>& s) { return s ? *s : std::string(); }
std::string opt_text(const std::optional<int64_t>& n) { return n ? std::to_string(*n) : std::string(); }

JobFields fields_of(const JobInfo& j) {
  return {std::to_string(j.job_id),  opt_text(j.job_name),      opt_text(j.job_qos),
          opt_text(j.array_job_id),  opt_text(j.array_task_id), opt_text(j.job_user),
          opt_text(j.job_partition), opt_text(j.job_account),   opt_text(j.job_num_nodes)};
}

std::string join_sorted(const std::set<std::string>& values) {
  std::string out;
  for (const auto& v : values) {
    if (v.empty()) continue;
    if (!out.empty()) out += ',';
    out += v;
  }
  return out;
}

// `shared_fields(job)` gives a job's fields, made once per job where the caller keeps them.
template <typename SharedFields>
NodeJobs node_jobs_of(const std::map<unsigned, std::vector<const JobInfo*>>& jobs_by_gpu, SharedFields shared_fields) {
  NodeJobs out;
  std::array<std::set<std::string>, 9> all;
  for (const auto& [gpu, jobs] : jobs_by_gpu) {
    std::vector<const JobInfo*> held;
    for (const JobInfo* j : jobs)
      if (j->has_job()) held.push_back(j);
    if (held.empty()) continue;  // no job on this GPU: its points stay untouched
    std::shared_ptr<const JobFields> fields;
    if (held.size() == 1) {
      fields = shared_fields(*held[0]);
    } else {  // several jobs on one GPU: sorted, comma-joined values
      std::array<std::set<std::string>, 9> per_gpu;
      for (const JobInfo* j : held) {
        JobFields f = fields_of(*j);
        for (size_t k = 0; k < f.size(); ++k) per_gpu[k].insert(f[k]);
      }
      JobFields joined;
      for (size_t k = 0; k < joined.size(); ++k) joined[k] = join_sorted(per_gpu[k]);
      fields = std::make_shared<const JobFields>(std::move(joined));
    }
    for (const JobInfo* j : held) {
      JobFields f = fields_of(*j);
      for (size_t k = 0; k < f.size(); ++k)
        if (!f[k].empty()) all[k].insert(std::move(f[k]));
    }
    out.by_gpu.emplace_back(gpu, std::move(fields));  // jobs_by_gpu is ordered by index
  }
  for (size_t k = 0; k < all.size(); ++k) out.lists[k].assign(all[k].begin(), all[k].end());
  out.job_ids = out.lists[0];
  for (const auto& id : out.job_ids) out.job_ids_joined += (out.job_ids_joined.empty() ? "" : ",") + id;
  return out;
}

}  // namespace

const JobFields* NodeJobs::gpu(int64_t index) const {
  for (const auto& [gpu, fields] : by_gpu)
    if (static_cast<int64_t>(gpu) == index) return fields.get();
  return nullptr;
}

const JobFields* NodeJobs::gpu(std::string_view index) const {
  if (index.empty() || index.size() > 10 || (index[0] == '0' && index.size() > 1)) return nullptr;
  int64_t n = 0;
  for (char c : index) {
    if (c < '0' || c > '9') return nullptr;
    n = n * 10 + (c - '0');
  }
  return gpu(n);
}

NodeJobs node_jobs_from(const std::map<unsigned, std::vector<JobInfo>>& jobs_by_gpu) {
  std::map<unsigned, std::vector<const JobInfo*>> pointers;
  for (const auto& [gpu, jobs] : jobs_by_gpu)
    for (const auto& j : jobs) pointers[gpu].push_back(&j);
  std::map<const JobInfo*, std::shared_ptr<const JobFields>> made;
  return node_jobs_of(pointers, [&](const JobInfo& j) {
    auto& f = made[&j];
    if (!f) f = std::make_shared<const JobFields>(fields_of(j));
    return f;
  });
}

ClusterNodeJobs cluster_node_jobs(const ClusterJobs& cluster) {
  ClusterNodeJobs out;
  std::vector<std::shared_ptr<const JobFields>> fields(cluster.jobs.size());  // each job's, made once
  auto shared_fields = [&](const JobInfo& j) {
    auto& f = fields[static_cast<size_t>(&j - cluster.jobs.data())];
    if (!f) f = std::make_shared<const JobFields>(fields_of(j));
    return f;
  };
  std::map<std::string, std::shared_ptr<const NodeJobs>> shared;  // by the node's GPU -> jobs assignment
  std::string key;
  const auto& list = cluster.gpu_jobs;  // sorted by node, then GPU
  for (size_t begin = 0, end = 0; begin < list.size(); begin = end) {
    uint32_t host = list[begin].host;
    key.clear();
    for (end = begin; end < list.size() && list[end].host == host; ++end) {
      if (end == begin || list[end].gpu != list[end - 1].gpu) {
        if (end != begin) key += ';';
        key += std::to_string(list[end].gpu);
      }
      key += ',' + std::to_string(list[end].job);
    }
    auto& table = shared[key];
    if (!table) {
      std::map<unsigned, std::vector<const JobInfo*>> jobs_by_gpu;
      for (size_t i = begin; i < end; ++i) jobs_by_gpu[list[i].gpu].push_back(&cluster.jobs[list[i].job]);
      table = std::make_shared<const NodeJobs>(node_jobs_of(jobs_by_gpu, shared_fields));
    }
    out.emplace(cluster.hosts[host], table);
  }
  return out;
}

}  // namespace gcm::processor
