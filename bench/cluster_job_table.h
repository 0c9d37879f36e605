// The job table of the simulated cluster, as `scontrol show job -d` prints it: whole-node jobs of 2-512 nodes on
// 60 % of the nodes, and 1-, 2- and 4-GPU jobs sharing the others (~19 200 jobs and 17 MB for 12 500 nodes). Shared
// by the whole-process load (cluster_load) and the refresh benchmark (processor_bench), so both read the same table.
#pragma once

#include <algorithm>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "slurm/hostlist.h"

namespace gcm::bench {

constexpr int kGpusPerHost = 8;

inline std::string host_name(int h) { return fmt::format("gpu{:05d}", h + 1); }

// Writes the table of `hosts` nodes to `path`; returns the number of jobs. Seeded: the same table every time.
// renamed_every N > 0: every Nth job has another name, as if it had changed since the table without it.
inline int write_job_table(const std::string& path, int hosts, int renamed_every = 0) {
  std::ofstream out(path);
  std::mt19937 rng(7);
  int id = 1000, jobs = 0;
  auto block = [&](const std::string& nodes, int num_nodes, const std::string& detail_lines) {
    out << "JobId=" << id << " JobName=job-" << id << (renamed_every && id % renamed_every == 0 ? "-renamed" : "")
        << "\n"
        << "   UserId=user" << id % 700 << "(" << 2000 + id % 700 << ") GroupId=users(100) MCS_label=N/A\n"
        << "   Priority=4294" << id << " Nice=0 Account=acct" << id % 40 << " QOS=normal\n"
        << "   JobState=RUNNING Reason=None Dependency=(null)\n"
        << "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
        << "   RunTime=01:02:03 TimeLimit=2-00:00:00 TimeMin=N/A\n"
        << "   SubmitTime=2026-12-01T10:00:00 EligibleTime=2026-12-01T10:00:00\n"
        << "   StartTime=2026-12-01T10:00:05 EndTime=2026-12-03T10:00:05 Deadline=N/A\n"
        << "   Partition=gpu AllocNode:Sid=login1:4242\n"
        << "   ReqNodeList=(null) ExcNodeList=(null)\n"
        << "   NodeList=" << nodes << "\n"
        << "   BatchHost=" << nodes.substr(0, nodes.find('[')) << "\n"
        << "   NumNodes=" << num_nodes << " NumCPUs=" << num_nodes * 8 << " NumTasks=" << num_nodes
        << " CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
        << "   TRES=cpu=" << num_nodes * 8 << ",node=" << num_nodes << ",billing=8,gres/gpu=" << num_nodes * 8 << "\n"
        << "   JOB_GRES=gpu:h100:" << num_nodes * 8 << "\n"
        << detail_lines << "   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0\n"
        << "   Command=/home/user/train.sh\n   WorkDir=/home/user\n   StdOut=/home/user/slurm-" << id << ".out\n\n";
    ++id;
    ++jobs;
  };
  int whole = hosts * 6 / 10, h = 0;
  std::uniform_int_distribution<int> pow2(1, 9);
  while (h < whole) {
    int n = std::min(whole - h, 1 << pow2(rng));
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i) names.push_back(host_name(h + i));
    std::string list = gcm::slurm::compress_hostlist(names);
    block(list, n, "     Nodes=" + list + " CPU_IDs=0-63 Mem=0 GRES=gpu:h100:8(IDX:0-7)\n");
    h += n;
  }
  std::uniform_int_distribution<int> size(0, 2);
  for (; h < hosts; ++h) {
    for (int gpu = 0; gpu < kGpusPerHost;) {
      int n = std::min(kGpusPerHost - gpu, 1 << size(rng));
      std::string idx = n == 1 ? std::to_string(gpu) : fmt::format("{}-{}", gpu, gpu + n - 1);
      block(host_name(h), 1,
            fmt::format("     Nodes={} CPU_IDs=0-7 Mem=0 GRES=gpu:h100:{}(IDX:{})\n", host_name(h), n, idx));
      gpu += n;
    }
  }
  return jobs;
}

}  // namespace gcm::bench
