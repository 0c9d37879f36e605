// How a command reaches the API server, as options shared by every command that does (kubernetes_monitor,
// sacct_publish --resolve-kubernetes-hosts, the agent's node actions, the kubelet attribution's DRA lookups): the
// in-cluster service account by default, or a kubeconfig.
#pragma once

#include <memory>
#include <string>

#include "cli/cli_fwd.h"
#include "kubernetes/api_client.h"

namespace gcm::kube {

struct AccessOptions {
  bool in_cluster = true;
  std::string kubeconfig;  // given: used instead of the service account
  std::string context;
  double timeout_s = 10;
  int page_size = 500;
};

// --in-cluster/--no-in-cluster (with `in_cluster_flag`), --kubeconfig, --kubeconfig-context, --kubernetes-timeout,
// --kubernetes-page-size.
void add_access_options(OptionBinder& b, AccessOptions& o, bool in_cluster_flag);

// The connection the options name. Throws KubeConfigError.
Connection connection_for(const AccessOptions& o);
std::unique_ptr<ApiClient> make_api_client(const AccessOptions& o);

}  // namespace gcm::kube
