// The Kubernetes metadata a health check's HealthCheckLog record can carry on a Kubernetes node: the pods active
// on the node, so that a failed check names the jobs it hit. GCM has two competing branches of this (neither merged
// yet); each is turned on by its own environment, as there, and adds its own fields, so a site that runs either
// keeps its records:
//   jobs  GCM_KUBERNETES_JOB_METADATA_ENABLED=true: active_job_ids, active_users, active_org_ids,
//         active_project_ids, active_pod_names, one entry per job (its pod with the smallest name), sorted by job id,
//         from the pods of GCM_KUBERNETES_JOB_NAMESPACE labelled with GCM_KUBERNETES_JOB_ID_LABEL.
//   pods  GCM_KUBERNETES_METADATA_ENABLED=true: pod_metadata, one compact JSON object per active pod of any
//         namespace that has one of GCM_KUBERNETES_METADATA_KEYS as a label or annotation, sorted by (namespace, name).
// Active: phase Pending, Running or Unknown. Without either variable nothing is asked and the record is GCM's.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

// Declared only: every health check includes this through check.h, and few need the API client's headers.
namespace gcm::kube {
struct Pod;
class ApiClient;
}  // namespace gcm::kube

namespace gcm::health {

struct KubernetesMetadataSettings {
  bool jobs = false;
  std::string job_namespace, job_id_label, job_label_selector, user_label, org_id_label, project_id_label;
  bool pods = false;
  std::vector<std::string> metadata_keys;
  std::string node_name;  // $NODE_NAME (the downward API's spec.nodeName), else the host name
  bool enabled() const { return jobs || pods; }
};

// From the environment (`getenv`: std::getenv in the checks). Throws std::invalid_argument naming the variable
// that an enabled branch needs and that is not set.
KubernetesMetadataSettings kubernetes_metadata_settings(const std::function<const char*(const char*)>& getenv,
                                                        const std::string& host_name);

struct KubernetesJobMetadata {
  std::vector<std::string> job_ids, users, org_ids, project_ids, pod_names;  // parallel, one entry per job
};

struct KubernetesMetadata {
  std::optional<KubernetesJobMetadata> jobs;             // the jobs branch, when enabled and answered
  std::optional<std::vector<std::string>> pod_metadata;  // the pods branch, likewise
};

// The jobs branch from the listed pods (a label the pod lacks is ""); pods without the job id label are left out.
KubernetesJobMetadata job_metadata_of(const std::vector<kube::Pod>& pods, const KubernetesMetadataSettings& s);
// The pods branch: {"annotations":{...},"labels":{...},"name":...,"namespace":...} with the selected keys only.
std::vector<std::string> pod_metadata_of(const std::vector<kube::Pod>& pods, const std::vector<std::string>& keys);

// Asks the API server for what the settings enable (the pods on s.node_name; `api` times out each request). A
// branch whose request fails is left null and its error appended to `errors`: a check's verdict never waits on
// Kubernetes beyond the timeout, nor changes because of it.
KubernetesMetadata fetch_kubernetes_metadata(const KubernetesMetadataSettings& s, kube::ApiClient& api,
                                             std::vector<std::string>& errors);

}  // namespace gcm::health
