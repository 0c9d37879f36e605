#include "processor/job_resolver.h"

#include <pthread.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>

#include "attribution/slurmctld_jobs.h"
#include "attribution/slurmd_local.h"
#include "gpu/gpu_sampler.h"
#include "gpu/nvml_library.h"

namespace gcm::processor {

namespace {

std::string short_name(std::string_view h) { return std::string(h.substr(0, h.find('.'))); }

std::string this_hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

// A cluster table is tens of thousands of small allocations; the old one, freed after a swap, would otherwise stay
// in the process' resident set as free heap (a 12 500-node cluster: 126 MiB resident instead of ~30 after a minute).
void release_freed_heap() {
#ifdef __GLIBC__
  ::malloc_trim(0);
#endif
}

bool source_needs_devices(const std::string& s) {
  // kubelet: its devices are UUIDs, which NVML turns into indices.
  return s == "nvml-processes" || s == "cgroup" || s == "mapping-files" || s == "kubelet";
}

}  // namespace

JobResolver::JobResolver(ResolverOptions opts, std::shared_ptr<spdlog::logger> log)
    : opts_(std::move(opts)), log_(std::move(log)), idle_node_(std::make_shared<const NodeJobs>()) {
  if (opts_.host.empty()) opts_.host = short_name(this_hostname());
  if (opts_.attribution.slurm_node.empty()) opts_.attribution.slurm_node = opts_.host;
  short_host_ = short_name(this_hostname());
  for (const auto& s : opts_.attribution.sources) {
    needs_devices_ |= source_needs_devices(s);
    remote_capable_ |= s == "slurmctld";
  }
}

JobResolver::~JobResolver() { stop(); }

bool JobResolver::is_local(std::string_view host) const {
  if (host.empty()) return true;
  std::string s = short_name(host);
  return s == opts_.host || s == short_host_;
}

// This host's jobs from every configured source (other hosts are lookup_in_cluster's).
std::shared_ptr<const NodeJobs> JobResolver::resolve(const std::string& host) {
  std::lock_guard resolving(resolve_mu_);
  std::vector<std::string> errors;
  std::map<unsigned, std::vector<JobInfo>> found;
  bool any_answer = false;
  auto take = [&](std::map<unsigned, std::vector<JobInfo>> more) {
    any_answer = true;
    for (auto& [gpu, jobs] : more)
      if (!jobs.empty() && !found.count(gpu)) found[gpu] = std::move(jobs);
  };
  if (needs_devices_) {
    std::vector<DeviceResult> devices;
    if (!sampler_ && !sampler_failed_) {
      try {
        auto timeout = std::chrono::milliseconds(5000);
        GpuSamplerOptions so;
        so.call_timeout = timeout;
        so.extended = false;
        sampler_ = std::make_unique<GpuSampler>(NvmlLibrary::open(nvml_library_path(opts_.nvml_library), timeout), so);
      } catch (const std::exception& e) {
        sampler_failed_ = true;
        errors.push_back(
            std::string("NVML (needed by the nvml-processes, cgroup, mapping-files and kubelet sources): ") + e.what());
      }
    }
    if (sampler_) devices = sampler_->sample();
    size_t before = errors.size();
    take(attribute_gpus(devices, opts_.attribution, &errors));
    any_answer = errors.size() == before || !found.empty();
  } else {
    for (const auto& source : opts_.attribution.sources) {
      try {
        if (source == "slurmd-local") {
          take(attribute_slurmd_local({opts_.attribution.scontrol, opts_.attribution.procfs,
                                       opts_.attribution.command_timeout, opts_.attribution.slurm_node}));
        } else if (source == "slurmctld") {
          SlurmctldOptions so;
          so.scontrol = opts_.attribution.scontrol;
          so.node = opts_.attribution.slurm_node;
          so.timeout = opts_.attribution.command_timeout;
          so.cache_file = opts_.attribution.slurmctld_cache_file;
          so.cache_duration = opts_.attribution.slurmctld_cache_duration;
          take(attribute_slurmctld(so));
        }
      } catch (const std::exception& e) {
        errors.push_back(source + ": " + e.what());
      }
    }
  }
  if (!errors.empty()) {
    std::lock_guard lock(mu_);
    stats_.errors += errors.size();
  }
  for (const auto& e : errors)
    if (log_) log_->warn("slurm_processor: attributing host {}: {}", host, e);
  if (!any_answer) return nullptr;
  return std::make_shared<const NodeJobs>(node_jobs_from(found));
}

std::shared_ptr<const NodeJobs> JobResolver::lookup(std::string_view host) {
  if (!is_local(host)) {
    if (remote_capable_) return lookup_in_cluster(short_name(host));
    std::lock_guard lock(mu_);
    ++stats_.hits;  // known at once: no source can attribute another host
    return nullptr;
  }
  const std::string& key = opts_.host;
  {
    std::lock_guard lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) {
      ++stats_.hits;
      it->second.used = std::chrono::steady_clock::now();
      return it->second.jobs;
    }
    ++stats_.misses;
  }
  std::shared_ptr<const NodeJobs> jobs = resolve(key);
  std::lock_guard lock(mu_);
  auto& e = entries_[key];
  e.jobs = jobs;
  e.used = std::chrono::steady_clock::now();
  stats_.hosts = entries_.size();
  return jobs;
}

std::shared_ptr<const NodeJobs> JobResolver::lookup_in_cluster(std::string_view host) {
  std::shared_ptr<const ClusterNodeJobs> table;
  bool tried = false;
  {
    std::lock_guard lock(mu_);
    cluster_idle_rounds_ = 0;
    table = cluster_;
    tried = cluster_tried_;
    if (table || tried) ++stats_.hits;
  }
  // Only the first read is waited for: after a failed one a request must not queue behind the refresher's next
  // try (up to the command timeout against a slurmctld that hangs).
  if (!table && !tried) table = first_cluster_table();
  if (!table) return nullptr;  // slurmctld did not answer: the items pass unchanged
  auto it = table->find(host);
  return it == table->end() ? idle_node_ : it->second;
}

// The first request for another host waits for the first read; concurrent ones wait for the same read, and after a
// failed one nobody waits: the refresher tries again.
std::shared_ptr<const ClusterNodeJobs> JobResolver::first_cluster_table() {
  std::lock_guard fetching(cluster_fetch_mu_);
  {
    std::lock_guard lock(mu_);
    if (cluster_ || cluster_tried_) return cluster_;
    ++stats_.misses;
  }
  auto table = fetch_cluster_table();
  release_freed_heap();  // what reading it left
  std::lock_guard lock(mu_);
  cluster_tried_ = true;
  if (table) {
    cluster_ = table;
    cluster_age_rounds_ = 0;
  }
  return cluster_;
}

std::shared_ptr<const ClusterNodeJobs> JobResolver::fetch_cluster_table() {
  try {
    ClusterJobs jobs = attribute_cluster(opts_.attribution.scontrol, opts_.attribution.command_timeout, cluster_sizes_);
    cluster_sizes_ = ClusterSizes::of(jobs);
    if (jobs.skipped_lists && log_)
      log_->warn(
          "slurm_processor: {} Nodes= list(s) of `scontrol show job -d` were not hostlists; their GPUs are "
          "not attributed",
          jobs.skipped_lists);
    std::shared_ptr<const ClusterNodeJobs> previous;
    {
      std::lock_guard lock(mu_);
      previous = cluster_;
    }
    auto table = std::make_shared<const ClusterNodeJobs>(cluster_node_jobs(jobs, previous.get()));
    previous.reset();
    std::lock_guard lock(mu_);
    stats_.cluster_jobs = jobs.jobs.size();
    stats_.cluster_nodes = table->size();
    return table;
  } catch (const std::exception& e) {
    {
      std::lock_guard lock(mu_);
      ++stats_.errors;
    }
    if (log_) log_->warn("slurm_processor: reading the cluster's jobs: {}", e.what());
    return nullptr;
  }
}

// One round of the refresher for other hosts: read the table again while lookups use it.
void JobResolver::refresh_cluster_table() {
  std::shared_ptr<const ClusterNodeJobs> old;  // freed outside the lock, before the heap is trimmed
  bool forget = false;
  {
    std::lock_guard lock(mu_);
    if (!cluster_tried_) return;
    if (++cluster_idle_rounds_ > 10) {  // unused: forget it; the next lookup reads it again
      forget = true;
      old = std::exchange(cluster_, nullptr);
      cluster_tried_ = false;
      stats_.cluster_jobs = stats_.cluster_nodes = 0;
    }
  }
  if (forget) {
    old.reset();
    release_freed_heap();
    return;
  }
  std::lock_guard fetching(cluster_fetch_mu_);
  auto table = fetch_cluster_table();
  {
    std::lock_guard lock(mu_);
    ++stats_.refreshes;
    if (table) {
      old = std::exchange(cluster_, table);
      cluster_age_rounds_ = 0;
    } else if (++cluster_age_rounds_ >= 10) {
      old = std::exchange(cluster_, nullptr);
      stats_.cluster_jobs = stats_.cluster_nodes = 0;
    }
  }
  old.reset();
  release_freed_heap();
}

ResolverStats JobResolver::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void JobResolver::start() {
  thread_ = std::thread([this] { refresher(); });
  ::pthread_setname_np(thread_.native_handle(), "job-refresh");  // for top -H and perf
}

void JobResolver::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// Every refresh interval, asks the sources again for this host if it was used since the last round (unused for ten
// rounds, it is forgotten: its next request resolves it again), and reads the cluster table again for other hosts.
void JobResolver::refresher() {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, opts_.refresh, [this] { return stopping_; })) {
    auto now = std::chrono::steady_clock::now();
    std::vector<std::string> hosts;
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (now - it->second.used > 10 * opts_.refresh) {
        it = entries_.erase(it);
      } else {
        hosts.push_back(it->first);
        ++it;
      }
    }
    stats_.hosts = entries_.size();
    lock.unlock();
    for (const auto& h : hosts) {
      std::shared_ptr<const NodeJobs> jobs = resolve(h);
      std::lock_guard relock(mu_);
      if (auto it = entries_.find(h); it != entries_.end()) it->second.jobs = jobs;
      ++stats_.refreshes;
    }
    refresh_cluster_table();
    lock.lock();
  }
}

}  // namespace gcm::processor
