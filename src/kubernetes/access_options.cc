#include "kubernetes/access_options.h"

#include "cli/option_binder.h"
#include "cli/option_limits.h"

namespace gcm::kube {

void add_access_options(OptionBinder& b, AccessOptions& o, bool in_cluster_flag) {
  if (in_cluster_flag)
    b.flag("--in-cluster,!--no-in-cluster", "in_cluster", o.in_cluster,
           "Reach the API server with the pod's service account (token and CA under "
           "/var/run/secrets/kubernetes.io/serviceaccount); --no-in-cluster reads a kubeconfig (--kubeconfig, else "
           "$KUBECONFIG, else ~/.kube/config).")
        ->capture_default_str();
  b.option("--kubeconfig", "kubeconfig", o.kubeconfig,
           "A kubeconfig to reach the API server with instead of the in-cluster service account (token, tokenFile "
           "or client certificate users; exec plug-ins are not run).");
  b.option("--kubeconfig-context", "kubeconfig_context", o.context,
           "The kubeconfig's context to use (default: its current-context).");
  b.option("--kubernetes-timeout", "kubernetes_timeout", o.timeout_s, "Seconds one API server request may take.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  b.option("--kubernetes-page-size", "kubernetes_page_size", o.page_size,
           "Objects per page of a list (the API's `limit`; the rest follows with `continue`); 0: one answer.")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
}

Connection connection_for(const AccessOptions& o) {
  if (!o.kubeconfig.empty() || !o.in_cluster) return kubeconfig_connection(o.kubeconfig, o.context);
  return in_cluster_connection();
}

std::unique_ptr<ApiClient> make_api_client(const AccessOptions& o) {
  ApiClientOptions ao;
  ao.timeout = std::chrono::milliseconds(static_cast<int64_t>(o.timeout_s * 1000));
  ao.page_size = o.page_size;
  return std::make_unique<ApiClient>(connection_for(o), ao);
}

}  // namespace gcm::kube
