// deploy/kubernetes/rbac.yaml against what the code asks for: each workload's flows run against the scripted API
// server, every request is turned into the RBAC (verb, group, resource) it needs, and the workload's ClusterRole
// must grant exactly those, no more (the "least verbs"). Kubernetes itself cannot run here, and kubectl
// --dry-run=client needs an API server for its discovery, so this is the manifests' check.
#include <yaml.h>

#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "attribution/kubelet_pods.h"
#include "fake_kubelet.h"
#include "kube_api_server.h"
#include "kubernetes/node_health.h"
#include "kubernetes/objects.h"

namespace gcm {
namespace {

using Rule = std::tuple<std::string, std::string, std::string>;  // verb, API group, resource

nlohmann::json yaml_node_to_json(yaml_document_t* doc, yaml_node_t* n) {
  switch (n->type) {
    case YAML_SCALAR_NODE:
      return std::string(reinterpret_cast<const char*>(n->data.scalar.value), n->data.scalar.length);
    case YAML_SEQUENCE_NODE: {
      nlohmann::json a = nlohmann::json::array();
      for (yaml_node_item_t* i = n->data.sequence.items.start; i < n->data.sequence.items.top; ++i)
        a.push_back(yaml_node_to_json(doc, yaml_document_get_node(doc, *i)));
      return a;
    }
    case YAML_MAPPING_NODE: {
      nlohmann::json o = nlohmann::json::object();
      for (yaml_node_pair_t* p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; ++p) {
        yaml_node_t* k = yaml_document_get_node(doc, p->key);
        o[std::string(reinterpret_cast<const char*>(k->data.scalar.value), k->data.scalar.length)] =
            yaml_node_to_json(doc, yaml_document_get_node(doc, p->value));
      }
      return o;
    }
    default:
      return nullptr;
  }
}

// Every document of a multi-document YAML file.
std::vector<nlohmann::json> load_documents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  yaml_parser_t parser;
  yaml_parser_initialize(&parser);
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  std::vector<nlohmann::json> out;
  for (;;) {
    yaml_document_t doc;
    if (!yaml_parser_load(&parser, &doc)) {
      ADD_FAILURE() << path << ": not YAML: " << (parser.problem ? parser.problem : "?") << " at line "
                    << parser.problem_mark.line + 1;
      break;
    }
    yaml_node_t* root = yaml_document_get_root_node(&doc);
    if (!root) {
      yaml_document_delete(&doc);
      break;
    }
    out.push_back(yaml_node_to_json(&doc, root));
    yaml_document_delete(&doc);
  }
  yaml_parser_delete(&parser);
  return out;
}

std::set<Rule> cluster_role_rules(const std::string& role) {
  std::set<Rule> out;
  bool found = false;
  for (const auto& d : load_documents(std::string(GCM_SOURCE_DIR) + "/deploy/kubernetes/rbac.yaml")) {
    if (d.value("kind", "") != "ClusterRole" || d["metadata"].value("name", "") != role) continue;
    found = true;
    for (const auto& r : d["rules"])
      for (const auto& g : r["apiGroups"])
        for (const auto& res : r["resources"])
          for (const auto& v : r["verbs"])
            out.insert({v.get<std::string>(), g.get<std::string>(), res.get<std::string>()});
  }
  EXPECT_TRUE(found) << "no ClusterRole " << role << " in deploy/kubernetes/rbac.yaml";
  return out;
}

// The RBAC a request needs, from its method and path (/api/v1/..., /apis/<group>/<version>/...).
Rule rule_of(const HttpRequest& r) {
  std::vector<std::string> parts;
  std::stringstream ss(r.path);
  for (std::string p; std::getline(ss, p, '/');)
    if (!p.empty()) parts.push_back(p);
  size_t at = parts[0] == "api" ? 2 : 3;  // after api/v1 or apis/<group>/<version>
  std::string group = parts[0] == "api" ? "" : parts[1];
  if (parts.size() > at + 1 && parts[at] == "namespaces") at += 2;
  std::string resource = parts.at(at);
  bool object = parts.size() > at + 1;
  if (parts.size() > at + 2) resource += "/" + parts[at + 2];  // a subresource: nodes/<name>/status
  std::string verb = r.method == "PATCH" ? "patch" : object ? "get" : "list";
  return {verb, group, resource};
}

std::set<Rule> rules_of(const std::vector<HttpRequest>& requests) {
  std::set<Rule> out;
  for (const auto& r : requests) out.insert(rule_of(r));
  return out;
}

std::string kubeconfig(const testing::KubeApiServer& api) {
  std::string path = api.dir().file("kubeconfig");
  std::ofstream(path) << "current-context: t\nclusters: [{name: c, cluster: {server: '" << api.server_url()
                      << "', certificate-authority: '" << api.ca_file() << "'}}]\n"
                      << "contexts: [{name: t, context: {cluster: c, user: u}}]\n"
                      << "users: [{name: u, user: {token: " << testing::KubeApiServer::kToken << "}}]\n";
  return path;
}

// The agent: the node marks (mark with cordon and taint, settle, clear) and the kubelet attribution's DRA lookup.
TEST(KubeRbacManifest, TheAgentsRoleIsWhatTheAgentAsks) {
  setenv("GCM_OTLP_GRPC_MODULE", GCM_GRPC_MODULE, 1);
  testing::KubeApiServer api;
  for (int i = 0; i < 4; ++i) api.add_node(testing::KubeApiServer::node_object("n" + std::to_string(i)));
  api.add_resource_slice("v1",
                         {{"spec",
                           {{"driver", "gpu.nvidia.com"},
                            {"nodeName", "n1"},
                            {"pool", {{"name", "n1"}}},
                            {"devices", {{{"name", "gpu-0"}, {"attributes", {{"uuid", {{"string", "GPU-x"}}}}}}}}}}});
  auto client = kube::ApiClient(api.connection());
  kube::NodeHealthOptions o;
  o.node = "n1";
  o.cordon = o.taint = true;
  o.limits.settle_seconds = 0.01;
  o.limits.max_partition_fraction = 0.5;
  ASSERT_EQ(kube::mark_node_unhealthy(client, o, "bad", false, 1772362800).action, kube::NodeMarkAction::Marked);
  ASSERT_EQ(kube::clear_node_mark(client, o, 1772362900).action, kube::NodeMarkAction::Cleared);

  testing::FakeKubelet kubelet;
  testing::podresources::ListPodResourcesResponse list;
  testing::FakeKubelet::add_container(list, "ml", "p", "c", "", {}, {{"gpu.nvidia.com", "n1", "gpu-0"}});
  kubelet.set_pods(list);
  KubeletAttributionOptions ko;
  ko.socket = kubelet.socket();
  ko.node_name = "n1";
  ko.api.kubeconfig = kubeconfig(api);
  std::vector<DeviceResult> gpus(1);
  gpus[0].sample.uuid = "GPU-x";
  std::vector<std::string> errors;
  ASSERT_EQ(attribute_kubelet(gpus, ko, &errors).size(), 1u);
  ASSERT_TRUE(errors.empty()) << errors[0];

  EXPECT_EQ(rules_of(api.requests()), cluster_role_rules("gcm-agent"));
}

// kubernetes_monitor lists pods and nodes; sacct_publish --resolve-kubernetes-hosts lists pods (same role).
TEST(KubeRbacManifest, TheMonitorsRoleIsWhatTheMonitorAsks) {
  testing::KubeApiServer api;
  api.add_node(testing::KubeApiServer::node_object("n0"));
  api.add_pod(testing::KubeApiServer::pod("slurm", "p0", "n0", {{"main", 0}}));
  auto client = kube::ApiClient(api.connection());
  kube::list_pods(client, {});
  kube::list_nodes(client);
  EXPECT_EQ(rules_of(api.requests()), cluster_role_rules("gcm-kubernetes-monitor"));
}

// The DaemonSet and Deployments run gcm commands with service accounts the RBAC file defines.
TEST(KubeRbacManifest, WorkloadsUseTheServiceAccountsDefined) {
  std::set<std::string> accounts;
  for (const auto& d : load_documents(std::string(GCM_SOURCE_DIR) + "/deploy/kubernetes/rbac.yaml"))
    if (d.value("kind", "") == "ServiceAccount") accounts.insert(d["metadata"]["name"].get<std::string>());
  for (const char* f :
       {"agent-daemonset.yaml", "kubernetes-monitor-deployment.yaml", "slurm-processor-deployment.yaml"}) {
    auto docs = load_documents(std::string(GCM_SOURCE_DIR) + "/deploy/kubernetes/" + f);
    ASSERT_FALSE(docs.empty()) << f;
    const auto& spec = docs[0]["spec"]["template"]["spec"];
    EXPECT_TRUE(accounts.count(spec["serviceAccountName"].get<std::string>())) << f;
    EXPECT_EQ(spec["containers"][0]["command"][0], "gcm") << f;
  }
}

}  // namespace
}  // namespace gcm
