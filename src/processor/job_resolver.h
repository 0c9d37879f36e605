// Which jobs run on a host, for slurm_processor: the attribution sources of the GPU issue (attribution/gpu_jobs.h)
// asked in order, first answer per GPU wins, kept in memory and refreshed in the background so that requests never
// wait for scontrol or NVML except the first one for a host. Telemetry of this host (no `host.name`, or the
// configured host) uses every source; another host's telemetry can only be attributed by the slurmctld source
// (slurmctld knows every node's jobs), else it passes unchanged. For other hosts the slurmctld source is one job
// table of the whole cluster (`scontrol show job -d`), read once per refresh whatever the number of hosts: a
// central processor for 12 500 nodes makes one scontrol call per refresh, not one per node.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <spdlog/logger.h>

#include "attribution/gpu_jobs.h"
#include "processor/node_jobs.h"

namespace gcm {
class GpuSampler;
}

namespace gcm::processor {

struct ResolverOptions {
  AttributionOptions attribution;  // sources, scontrol, procfs, cgroupfs, mapping dir, slurmctld cache file/duration
  std::string host;                // this host's Slurm node name (attribution.slurm_node follows it)
  std::chrono::milliseconds refresh{5000};
  std::optional<std::string> nvml_library;  // for the sources that need the GPU list (nvml-processes, cgroup, ...)
};

struct ResolverStats {
  uint64_t hits = 0;           // lookups answered from memory
  uint64_t misses = 0;         // lookups that had to ask the sources
  uint64_t refreshes = 0;      // background refreshes
  uint64_t errors = 0;         // source failures
  uint64_t hosts = 0;          // hosts in memory
  uint64_t cluster_jobs = 0;   // jobs holding an allocation in the cluster table in memory
  uint64_t cluster_nodes = 0;  // nodes with a GPU in one of them
};

class JobResolver {
 public:
  JobResolver(ResolverOptions opts, std::shared_ptr<spdlog::logger> log);
  ~JobResolver();
  JobResolver(const JobResolver&) = delete;
  JobResolver& operator=(const JobResolver&) = delete;

  // The jobs of `host` ("" = this host); null when nothing is known (no source can attribute that host, or every
  // source failed): the items pass unchanged then, as the reference's processor does on errors.
  std::shared_ptr<const NodeJobs> lookup(std::string_view host);
  ResolverStats stats() const;
  // Starts the background refresher.
  void start();
  void stop();

 private:
  struct Entry {
    std::shared_ptr<const NodeJobs> jobs;
    std::chrono::steady_clock::time_point used;
  };
  std::shared_ptr<const NodeJobs> resolve(const std::string& host);
  bool is_local(std::string_view host) const;
  void refresher();
  std::shared_ptr<const NodeJobs> lookup_in_cluster(std::string_view host);
  std::shared_ptr<const ClusterNodeJobs> first_cluster_table();
  // Reads the cluster's job table; null when scontrol failed (counted and logged).
  std::shared_ptr<const ClusterNodeJobs> fetch_cluster_table();
  void refresh_cluster_table();

  ResolverOptions opts_;
  std::shared_ptr<spdlog::logger> log_;
  std::string short_host_;
  bool needs_devices_ = false;
  bool remote_capable_ = false;
  std::unique_ptr<GpuSampler> sampler_;
  bool sampler_failed_ = false;

  mutable std::mutex mu_;  // entries_ and the counters
  std::map<std::string, Entry, std::less<>> entries_;
  ResolverStats stats_;
  std::mutex resolve_mu_;  // one resolution at a time (scontrol and NVML are not asked concurrently)

  // Other hosts (mu_): the last good cluster table, how many rounds ago it was read and how many rounds ago a
  // lookup used it. A failed refresh keeps the last table for up to ten rounds (a slurmctld restart must not strip
  // the job attributes of a whole cluster's telemetry); a table nobody used for ten rounds is dropped.
  std::shared_ptr<const ClusterNodeJobs> cluster_;
  int cluster_age_rounds_ = 0;
  int cluster_idle_rounds_ = 0;
  bool cluster_tried_ = false;                 // a first read was made (failed or not): later ones are the refresher's
  std::mutex cluster_fetch_mu_;                // one cluster read at a time
  ClusterSizes cluster_sizes_;                 // of the last read (cluster_fetch_mu_), for the next to reserve
  std::shared_ptr<const NodeJobs> idle_node_;  // a node in no job: attributed, with nothing to add
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gcm::processor
