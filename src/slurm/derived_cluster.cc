#include "slurm/derived_cluster.h"

namespace gcm::slurm {
namespace {

std::string_view before(std::string_view s, char c) {
  size_t p = s.find(c);
  return p == std::string_view::npos ? s : s.substr(0, p);
}

std::string partition_of(const FieldLookup& get, bool partition_from_qos) {
  if (partition_from_qos) return std::string(before(get("Name").value_or(""), '_'));
  if (auto p = get("PARTITION")) {
    std::string out;
    for (char c : *p)
      if (c != '*') out.push_back(c);
    return out;
  }
  if (auto p = get("Partition")) {
    if (p->empty())
      if (auto nodes = get("NodeList")) return std::string(before(*nodes, '-'));
    return std::string(*p);
  }
  if (auto p = get("PartitionName")) return std::string(*p);
  if (auto node = get("Node")) return std::string(before(*node, '-'));
  return "";
}

}  // namespace

std::string derived_cluster(const FieldLookup& get, bool heterogeneous_cluster_v1, std::string_view cluster,
                            bool partition_from_qos) {
  if (!heterogeneous_cluster_v1) return std::string(cluster);
  std::string partition = partition_of(get, partition_from_qos);
  std::string name(cluster);
  for (const char* key : {"cluster", "CLUSTER", "Cluster"})
    if (auto c = get(key)) {
      name = std::string(*c);
      break;
    }
  return partition.empty() ? name : name + "." + partition;
}

}  // namespace gcm::slurm
