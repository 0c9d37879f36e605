// check-nccl's plan and verdict: which hosts run together (single, pairwise, pairwise-quick), the mpirun command
// line of each group and operation, and the "Avg bus bandwidth" figure read from nccl-tests' output.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gcm::health {

enum class NcclMode { Single, Pairwise, PairwiseQuick };

// single: each host alone; pairwise: every 2-combination; pairwise-quick: (h0,h1), (h2,h3), ... and (last, first)
// when the count is odd. Throws std::invalid_argument when a pairwise mode has fewer than 2 hosts.
std::vector<std::vector<std::string>> nccl_host_groups(const std::vector<std::string>& hosts, NcclMode mode);

struct NcclCommand {
  std::string mpirun = "mpirun";
  int gpus_per_node = 8;
  std::optional<int> np;  // default gpus_per_node x group size
  std::vector<std::string> mpi_opts;
  std::vector<std::string> exports;
  bool nvlink = false;  // without NVLink, P2P and SHM transports are disabled
  std::string tests_dir;
  std::string op;  // all_gather, all_reduce, alltoall
  std::vector<std::string> test_opts;
};

std::vector<std::string> nccl_argv(const NcclCommand& c, const std::vector<std::string>& group);

// The first number on the first line containing "Avg bus bandwidth"; nullopt when there is none.
std::optional<double> nccl_avg_bus_bandwidth(std::string_view output);

}  // namespace gcm::health
