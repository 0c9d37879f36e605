#include "processor/node_jobs.h"

#include <algorithm>
#include <set>

namespace gcm::processor {

namespace {

std::string opt_text(const std::optional<std::string>& s) { return s ? *s : std::string(); }
std::string opt_text(const std::optional<int64_t>& n) { return n ? std::to_string(*n) : std::string(); }

JobValues values_of(const JobInfo& j) {
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

JobValues values_of(const ClusterJob& j) { return values_of(j.info()); }

template <typename Job>
JobFields fields_of(const Job& j) {
  return JobFields(values_of(j));
}

// Several jobs on one GPU: each key's values sorted, unique and comma-joined.
template <typename Job>
JobFields joined_fields(const std::vector<const Job*>& held) {
  std::array<std::set<std::string>, 9> per_gpu;
  for (const Job* j : held) {
    JobValues v = values_of(*j);
    for (size_t k = 0; k < v.size(); ++k) per_gpu[k].insert(std::move(v[k]));
  }
  JobValues joined;
  for (size_t k = 0; k < joined.size(); ++k) joined[k] = join_sorted(per_gpu[k]);
  return JobFields(joined);
}

// `shared_fields(job)` gives a job's fields, made once per job where the caller keeps them. Job: a JobInfo (a node's
// own attribution) or a ClusterJob (the cluster's table).
template <typename Job, typename SharedFields>
NodeJobs node_jobs_of(const std::map<unsigned, std::vector<const Job*>>& jobs_by_gpu, SharedFields shared_fields) {
  NodeJobs out;
  std::set<const Job*> seen;
  for (const auto& [gpu, jobs] : jobs_by_gpu) {
    std::vector<const Job*> held;
    for (const Job* j : jobs)
      if (j->has_job()) held.push_back(j);
    if (held.empty()) continue;  // no job on this GPU: its points stay untouched
    std::shared_ptr<const JobFields> fields;
    if (held.size() == 1) {
      fields = shared_fields(*held[0]);
    } else {  // several jobs on one GPU: sorted, comma-joined values
      fields = std::make_shared<const JobFields>(joined_fields(held));
    }
    for (const Job* j : held)
      if (seen.insert(j).second) out.jobs.push_back(held.size() == 1 ? fields : shared_fields(*j));
    out.by_gpu.emplace_back(gpu, std::move(fields));  // jobs_by_gpu is ordered by index
  }
  out.by_gpu.shrink_to_fit();
  out.jobs.shrink_to_fit();
  return out;
}

}  // namespace

JobFields::JobFields(const JobValues& values) {
  size_t total = 0;
  for (const auto& v : values) total += v.size();
  text_.reserve(total);
  for (size_t k = 0; k < values.size(); ++k) {
    text_ += values[k];
    ends_[k] = static_cast<uint32_t>(text_.size());  // a job's fields are far below 4 GiB (scontrol's lines)
  }
}

std::vector<std::string_view> NodeJobs::values(size_t key) const {
  std::vector<std::string_view> list;
  list.reserve(jobs.size());
  for (const auto& fields : jobs)
    if (!(*fields)[key].empty()) list.push_back((*fields)[key]);
  std::sort(list.begin(), list.end());
  list.erase(std::unique(list.begin(), list.end()), list.end());
  return list;
}

std::array<std::vector<std::string_view>, 9> NodeJobs::lists() const {
  std::array<std::vector<std::string_view>, 9> out;
  for (size_t k = 0; k < out.size(); ++k) out[k] = values(k);
  return out;
}

std::string NodeJobs::job_ids_joined() const {
  std::string out;
  for (std::string_view id : values(0)) {
    if (!out.empty()) out += ',';
    out += id;
  }
  return out;
}

const JobFields* NodeJobs::gpu(int64_t index) const {
  for (const auto& [gpu, fields] : by_gpu)
    if (static_cast<int64_t>(gpu) == index) return fields.get();
  return nullptr;
}

std::optional<int64_t> gpu_index_of(std::string_view index) {
  if (index.empty() || index.size() > 10 || (index[0] == '0' && index.size() > 1)) return std::nullopt;
  int64_t n = 0;
  for (char c : index) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

const JobFields* NodeJobs::gpu(std::string_view index) const {
  auto n = gpu_index_of(index);
  return n ? gpu(*n) : nullptr;
}

const PodValues* NodeJobs::pod(int64_t index) const {
  for (const auto& [gpu, pod] : pods_by_gpu)
    if (static_cast<int64_t>(gpu) == index) return &pod;
  return nullptr;
}

NodeJobs node_jobs_from(const std::map<unsigned, std::vector<JobInfo>>& jobs_by_gpu) {
  std::map<unsigned, std::vector<const JobInfo*>> pointers;
  for (const auto& [gpu, jobs] : jobs_by_gpu)
    for (const auto& j : jobs) pointers[gpu].push_back(&j);
  std::map<const JobInfo*, std::shared_ptr<const JobFields>> made;
  NodeJobs out = node_jobs_of(pointers, [&](const JobInfo& j) {
    auto& f = made[&j];
    if (!f) f = std::make_shared<const JobFields>(fields_of(j));
    return f;
  });
  for (const auto& [gpu, jobs] : jobs_by_gpu) {
    // The attribution gives every job of a GPU the same pod (attribution/gpu_jobs.h add_pods): the first says it.
    for (const auto& j : jobs) {
      if (!j.pod) continue;
      out.pods_by_gpu.emplace_back(gpu, PodValues{*j.pod, opt_text(j.pod_namespace), opt_text(j.container)});
      break;
    }
  }
  return out;
}

namespace {

// Whether `old` (a node's table from the read before) is what the GPUs of list[begin, end) give now. `same` memoizes,
// per job of this read, the old fields found equal to its own: a job of 500 nodes is compared once, not 4 000 times.
bool unchanged(const NodeJobs& old, const ClusterJobs& cluster, size_t begin, size_t end,
               std::vector<const JobFields*>& same) {
  const auto& list = cluster.gpu_jobs;
  size_t k = 0;
  std::vector<uint32_t> held;  // this GPU's jobs (indices into cluster.jobs)
  for (size_t i = begin; i < end;) {
    unsigned gpu = list[i].gpu;
    held.clear();
    for (; i < end && list[i].gpu == gpu; ++i)
      if (cluster.jobs[list[i].job].has_job()) held.push_back(list[i].job);
    if (held.empty()) continue;  // not in a table (node_jobs_of skips it too)
    if (k == old.by_gpu.size() || old.by_gpu[k].first != gpu) return false;
    const JobFields* had = old.by_gpu[k++].second.get();
    if (held.size() == 1) {
      if (same[held[0]] == had) continue;
      if (fields_of(cluster.jobs[held[0]]) != *had) return false;
      same[held[0]] = had;
    } else {
      std::vector<const ClusterJob*> jobs;
      for (uint32_t j : held) jobs.push_back(&cluster.jobs[j]);
      if (joined_fields(jobs) != *had) return false;
    }
  }
  return k == old.by_gpu.size();
}

}  // namespace

ClusterNodeJobs cluster_node_jobs(const ClusterJobs& cluster, const ClusterNodeJobs* previous) {
  ClusterNodeJobs out;
  out.reserve(cluster.hosts.size());
  std::vector<std::shared_ptr<const JobFields>> fields(cluster.jobs.size());  // each job's, made once
  auto shared_fields = [&](const ClusterJob& j) {
    auto& f = fields[static_cast<size_t>(&j - cluster.jobs.data())];
    if (!f) f = std::make_shared<const JobFields>(fields_of(j));
    return f;
  };
  std::vector<const JobFields*> same(previous ? cluster.jobs.size() : 0, nullptr);
  std::map<std::string, std::shared_ptr<const NodeJobs>> shared;  // by the node's GPU -> jobs assignment
  std::string key;
  const auto& list = cluster.gpu_jobs;  // sorted by node, then GPU
  for (size_t begin = 0, end = 0; begin < list.size(); begin = end) {
    uint32_t host = list[begin].host;
    for (end = begin; end < list.size() && list[end].host == host; ++end) {
    }
    const std::string& name = cluster.hosts[host];
    if (previous) {
      auto had = previous->find(name);
      if (had != previous->end() && unchanged(*had->second, cluster, begin, end, same)) {
        out.emplace(name, had->second);
        continue;
      }
    }
    key.clear();
    for (size_t i = begin; i < end; ++i) {
      if (i == begin || list[i].gpu != list[i - 1].gpu) {
        if (i != begin) key += ';';
        key += std::to_string(list[i].gpu);
      }
      key += ',' + std::to_string(list[i].job);
    }
    auto& table = shared[key];
    if (!table) {
      std::map<unsigned, std::vector<const ClusterJob*>> jobs_by_gpu;
      for (size_t i = begin; i < end; ++i) jobs_by_gpu[list[i].gpu].push_back(&cluster.jobs[list[i].job]);
      table = std::make_shared<const NodeJobs>(node_jobs_of(jobs_by_gpu, shared_fields));
    }
    out.emplace(name, table);
  }
  return out;
}

}  // namespace gcm::processor
