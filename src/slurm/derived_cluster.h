// The reference's derived_cluster (gcm-reference.md §1.6): with --heterogeneous-cluster-v1, records of one
// partition are labelled "<cluster>.<partition>" so a cluster with several GPU types reads as several clusters.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace gcm::slurm {

// A record's field by the reference's key ("PARTITION", "Partition", "NodeList", ...); nullopt when absent.
using FieldLookup = std::function<std::optional<std::string_view>(std::string_view key)>;

// The partition is taken from the first rule that applies: the QOS name up to its first '_' (only when
// partition_from_qos), PARTITION without '*' (sinfo/squeue), Partition (sacct; when empty, NodeList up to its
// first '-'), PartitionName (scontrol), Node up to its first '-' (health checks). The cluster is the record's
// cluster/CLUSTER/Cluster field, else `cluster`. Without the flag the result is `cluster`.
std::string derived_cluster(const FieldLookup& get, bool heterogeneous_cluster_v1, std::string_view cluster,
                            bool partition_from_qos = false);

}  // namespace gcm::slurm
