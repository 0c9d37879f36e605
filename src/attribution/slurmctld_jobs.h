// Attribution source "slurmctld": the jobs slurmd runs here (`scontrol listpids`), then each job's allocation as
// slurmctld knows it (`scontrol show job -d <id>`): the GPU indices of this node's "Nodes=... GRES=gpu:...(IDX:..)"
// line, with the job's name, user, account, partition, QOS, array ids and node count. The answers are cached in a
// file for a configurable time (shelper's cache_filepath / cache_duration), since asking slurmctld from every node
// every few seconds loads it.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attribution/job_info.h"
#include "slurm/scontrol.h"

namespace gcm {

// The GPUs of `host` in `scontrol show job(s) -d` output: for each job block whose NodeList contains host, the IDX
// indices of the detail lines whose Nodes= contains host (shelper merged the lines of every node of a multi-node
// job; here each node gets only its own GPUs).
std::map<unsigned, std::vector<JobInfo>> gpus_from_job_blocks(std::string_view scontrol_output, std::string_view host);

struct SlurmctldOptions {
  std::string scontrol = "scontrol";
  std::string node;  // this node's Slurm name (required)
  std::chrono::milliseconds timeout{10000};
  std::string cache_file;  // empty: no cache
  std::chrono::seconds cache_duration{0};
};

// Throws std::runtime_error naming the command when scontrol fails.
std::map<unsigned, std::vector<JobInfo>> attribute_slurmctld(const SlurmctldOptions& opts);

// One job of a cluster's table: what job_of_block reads of a block, its strings side by side in one allocation. A
// JobInfo is 344 bytes of optionals, and a refresh holds some 20 000 of them while it builds the new table.
class ClusterJob {
 public:
  explicit ClusterJob(const JobInfo& job);
  JobInfo info() const;  // the JobInfo it was made of
  int64_t job_id() const { return job_id_; }
  bool has_job() const { return job_id_ >= 0; }

 private:
  int64_t job_id_;
  std::string text_;              // name, user, account, partition, QOS, one after the other
  std::array<uint32_t, 5> ends_;  // where each ends in text_
  uint8_t present_ = 0;           // which of the eight optionals were set: bits 0-4 the strings, 5-7 the numbers
  int64_t numbers_[3] = {};       // node count, array job id, array task id
};

// Every node's GPUs at once, from one `scontrol show job -d` of all jobs: what slurm_processor needs to attribute
// the telemetry of a whole cluster. Asking per node instead (`listpids`, then `show job` per job) would be
// thousands of calls per refresh on a large cluster, and `scontrol listpids` only answers on the node itself.
struct ClusterJobs {
  std::vector<ClusterJob> jobs;    // the jobs that hold an allocation, each once
  std::vector<std::string> hosts;  // the nodes with a GPU of such a job, each once
  // One GPU of one node held by one job, sorted by node and GPU (a GPU's jobs in the order read). A flat list:
  // maps of maps per node and GPU held 16 MiB for a 12 500-node cluster, beside the tables built from them.
  struct GpuJob {
    uint32_t host;  // index into hosts
    uint32_t gpu;
    uint32_t job;  // index into jobs
  };
  std::vector<GpuJob> gpu_jobs;
  uint64_t skipped_lists = 0;  // Nodes= lists that were not hostlists (their GPUs are not attributed)

  // The GPUs of one node and the indices of their jobs (empty for a node without any).
  std::map<unsigned, std::vector<uint32_t>> gpus_of(std::string_view host) const;
};

// How large a read came out, for the next read of the same cluster to reserve: a table read again every few seconds
// otherwise grows its lists by doubling each time, a move of every job read so far into memory not yet touched
// (processor_bench, a 12 500-node refresh that keeps unchanged tables: 174-191 ms CPU with it, 203 without).
struct ClusterSizes {
  size_t jobs = 0, hosts = 0, gpu_jobs = 0;
  static ClusterSizes of(const ClusterJobs& c) { return {c.jobs.size(), c.hosts.size(), c.gpu_jobs.size()}; }
};

// A job holds its nodes' GPUs while it runs, is suspended or completes (its processes may still be there); pending
// and ended jobs, which `scontrol show job` lists for MinJobAge, hold none even though they keep their Nodes= lines.
bool job_state_holds_allocation(std::string_view job_state);

// Reads `scontrol show job -d` output line by line (a cluster's is tens of megabytes: nothing is held but the
// record being read and the result).
class ClusterJobsReader {
 public:
  explicit ClusterJobsReader(ClusterSizes expected = {});
  void feed(std::string_view line);
  ClusterJobs finish();

 private:
  void add(const slurm::ScontrolRecord& record);
  uint32_t host_index(const std::string& host);
  slurm::ScontrolParser parser_;
  ClusterJobs out_;
  std::unordered_map<std::string, uint32_t> host_indices_;
};

ClusterJobs cluster_jobs_from(std::string_view scontrol_output);

// Runs `scontrol show job -d` (every job, one call) and reads it. Throws std::runtime_error naming the command
// when scontrol fails or times out.
// `expected`: the sizes of the previous read, if any.
ClusterJobs attribute_cluster(const std::string& scontrol, std::chrono::milliseconds timeout,
                              ClusterSizes expected = {});

}  // namespace gcm
