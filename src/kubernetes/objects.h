// The parts of pods and nodes that gcm reads, listed through the API client with only those fields kept.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kubernetes/api_client.h"

namespace gcm::kube {

// SUNK (CoreWeave's Slurm on Kubernetes) annotates the pod of a Slurm job with the job's id.
inline constexpr const char* kSunkJobIdAnnotation = "slurm.coreweave.com/job-id";

struct ContainerState {
  std::string name;
  int64_t restart_count = 0;
};

struct Pod {
  std::string name, namespace_, node_name, phase;
  std::map<std::string, std::string> labels, annotations;  // those asked for
  std::vector<ContainerState> containers;                  // status.containerStatuses
  std::optional<std::string> annotation(const std::string& key) const;
  std::optional<std::string> label(const std::string& key) const;
};

struct PodQuery {
  std::string namespace_;                                             // "" for every namespace
  std::string label_selector;                                         // "" for none
  std::string field_selector;                                         // e.g. spec.nodeName=n1
  std::vector<std::string> label_keys = {};                           // labels to keep ("*": all)
  std::vector<std::string> annotation_keys = {kSunkJobIdAnnotation};  // annotations to keep ("*": all)
};

// Every pod the query selects (page by page). Throws ApiError.
std::vector<Pod> list_pods(ApiClient& api, const PodQuery& query);
// The same, one pod at a time, for callers that keep less than the list (the monitor's rows).
size_t for_each_pod(ApiClient& api, const PodQuery& query, const std::function<void(const Pod&)>& on_pod,
                    const std::function<void()>& on_restart);
Pod pod_from_json(const nlohmann::json& item);

struct NodeCondition {
  std::string node, type, status, reason, message;
  std::string last_transition_time;  // RFC 3339, "" when absent
};

struct Node {
  std::string name;
  bool unschedulable = false;
  std::vector<NodeCondition> conditions;
  nlohmann::json taints = nlohmann::json::array();  // spec.taints as the server has them
  std::map<std::string, std::string> annotations;   // those asked for
  std::string resource_version;
};

// Every node (page by page); `annotation_keys` to keep. Throws ApiError.
std::vector<Node> list_nodes(ApiClient& api, const std::string& label_selector = "",
                             const std::vector<std::string>& annotation_keys = {});
Node get_node(ApiClient& api, const std::string& name, const std::vector<std::string>& annotation_keys = {});
Node node_from_json(const nlohmann::json& item);
JsonFilter node_filter(const std::vector<std::string>& annotation_keys);

// RFC 3339 ("2026-03-01T10:00:00Z", fractions and offsets allowed) as Unix seconds; nullopt when malformed.
std::optional<int64_t> parse_rfc3339(const std::string& text);
std::string format_rfc3339(int64_t unix_seconds);

}  // namespace gcm::kube
