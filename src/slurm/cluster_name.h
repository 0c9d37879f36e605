// The cluster name when --cluster is not given: ClusterName from `scontrol show config`, or "local-node" when
// Slurm is not available (as the reference's clusterscope does).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace gcm {

// Parses the first line containing "ClusterName" ("ClusterName = x" -> "x"); nullopt when there is none.
std::optional<std::string> parse_cluster_name(std::string_view scontrol_show_config);

// Runs `scontrol show config` with a timeout; "local-node" on any failure.
std::string detect_cluster(std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace gcm
