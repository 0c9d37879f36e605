// The cluster name when --cluster is not given: ClusterName from `scontrol show config`, or "local-node" when
// Slurm is not available (as the reference's clusterscope does).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace gcm {

// Parses the first line containing "ClusterName" ("ClusterName = x" -> "x"); nullopt when there is none.
std::optional<std::string> parse_cluster_name(std::string_view scontrol_show_config);

struct ClusterNameLookup {
  std::optional<std::string> name;  // nullopt: use "local-node"
  // Why Slurm did not answer although scontrol is installed (timed out, failed, printed no ClusterName): a hiccup
  // worth a warning and another try. Empty when there is no Slurm here at all (no scontrol on PATH), which is the
  // reference's quiet "local-node" case.
  std::string problem;
};

// Runs `scontrol show config` with a timeout.
ClusterNameLookup look_up_cluster_name(std::chrono::milliseconds timeout = std::chrono::seconds(10));

// The warning for a lookup that had a problem: names the command, the problem and the fallback.
std::string cluster_name_warning(const ClusterNameLookup& lookup);

// look_up_cluster_name's name, else "local-node"; a problem goes to `warn` (when given) instead of passing in
// silence.
std::string detect_cluster(std::chrono::milliseconds timeout = std::chrono::seconds(10),
                           const std::function<void(const std::string&)>& warn = {});

}  // namespace gcm
