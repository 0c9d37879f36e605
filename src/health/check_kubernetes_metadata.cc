// CheckRun's part of HealthCheckLog's Kubernetes metadata: when and how the API server is asked.
#include <cstdlib>

#include "health/check.h"
#include "kubernetes/access_options.h"

namespace gcm::health {

namespace {

// GCM's branches give the API server 3 s.
constexpr double kKubernetesMetadataTimeoutS = 3;

// In a pod: the service account. Outside one ($KUBERNETES_SERVICE_HOST unset) a kubeconfig ($KUBECONFIG, else
// ~/.kube/config), which is how an operator tries the records from a workstation.
kube::AccessOptions kubernetes_metadata_access() {
  kube::AccessOptions a;
  a.timeout_s = kKubernetesMetadataTimeoutS;
  const char* in_pod = std::getenv("KUBERNETES_SERVICE_HOST");
  a.in_cluster = in_pod && *in_pod;
  return a;
}

}  // namespace

void CheckRun::add_kubernetes_metadata(HealthCheckResult& r) {
  if (!kubernetes_asked) {
    kubernetes_asked = true;
    try {
      // The record's node (the host, or --node) where $NODE_NAME is not set.
      kubernetes_settings = kubernetes_metadata_settings(std::getenv, r.node);
      if (kubernetes_settings.enabled()) {
        auto api = kube::make_api_client(kubernetes_metadata_access());
        std::vector<std::string> errors;
        kubernetes_metadata = fetch_kubernetes_metadata(kubernetes_settings, *api, errors);
        for (const auto& e : errors) {
          if (log) log->warn("{}", e);
          telemetry_warnings.push_back(e);
        }
      }
    } catch (const std::exception& e) {
      std::string why = std::string("Kubernetes metadata: ") + e.what();
      if (log) log->warn("{}", why);
      telemetry_warnings.push_back(why);
    }
  }
  r.kubernetes_jobs = kubernetes_settings.jobs;
  r.kubernetes_pods = kubernetes_settings.pods;
  r.kubernetes = kubernetes_metadata;
}

}  // namespace gcm::health
