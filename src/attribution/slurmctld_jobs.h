// Attribution source "slurmctld": the jobs slurmd runs here (`scontrol listpids`), then each job's allocation as
// slurmctld knows it (`scontrol show job -d <id>`): the GPU indices of this node's "Nodes=... GRES=gpu:...(IDX:..)"
// line, with the job's name, user, account, partition, QOS, array ids and node count. The answers are cached in a
// file for a configurable time (shelper's cache_filepath / cache_duration), since asking slurmctld from every node
// every few seconds loads it.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "attribution/job_info.h"

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

}  // namespace gcm
