// gcm kubernetes_monitor (gcm-newer.md §1.5): every round, the pods (one KubernetesPodPayload per container status,
// with the Slurm job id SUNK annotates its job pods with) and every node's conditions (one KubernetesNodePayload per
// condition), from the API server through kubernetes/api_client.h.
#include <ctime>

#include <fmt/format.h>

#include "cli/option_binder.h"
#include "collectors/collector.h"
#include "collectors/sacctmgr.h"
#include "kubernetes/access_options.h"
#include "kubernetes/objects.h"

namespace gcm {
namespace {

constinit const LazySchema kKubernetesPodPayload{[] {
  Schema s;
  s.name = "KubernetesPodPayload";
  s.description =
      "One container status of one pod (a pod without statuses: one row, restart_count 0), from the API "
      "server.";
  s.metric_prefix = "kubernetes_pod";
  s.data_type = DataType::Metric;
  s.identifier = DataIdentifier::K8sPod;
  FieldSpec pod{"pod", FieldType::Object, FieldRole::Attribute, "",
                "KubernetesPodRow: name, namespace, node_name, phase, restart_count, container_name, slurm_job_id"};
  pod.members = {
      {"name", FieldType::String, FieldRole::Identity, "", "pod name"},
      {"namespace", FieldType::String, FieldRole::Identity, "", "pod namespace"},
      {"node_name", FieldType::String, FieldRole::Identity, "", "node the pod is bound to (spec.nodeName)"},
      {"phase", FieldType::String, FieldRole::Attribute, "", "status.phase: Pending, Running, Succeeded, Failed"},
      {"restart_count", FieldType::Int, FieldRole::Gauge, "", "restarts of the container (0 without a status)"},
      {"container_name", FieldType::String, FieldRole::Identity, "", "container name; null without a status"},
      {"slurm_job_id", FieldType::String, FieldRole::Identity, "",
       "the pod's slurm.coreweave.com/job-id annotation (SUNK), else null"},
  };
  s.fields = {
      {"ds", FieldType::String, FieldRole::Attribute, "", "collection date YYYY-MM-DD in America/Los_Angeles"},
      {"collection_unixtime", FieldType::Int, FieldRole::Attribute, "seconds", "unix time of the collection"},
      {"cluster", FieldType::String, FieldRole::Identity, "", "cluster name"},
      {"derived_cluster", FieldType::String, FieldRole::Identity, "", "the cluster (pods have no partition)"},
      pod,
  };
  s.info_labels = {"pod.phase"};
  return s;
}};

constinit const LazySchema kKubernetesNodePayload{[] {
  Schema s;
  s.name = "KubernetesNodePayload";
  s.description = "One condition of one node (Ready, MemoryPressure, GcmGpuHealthy, ...), from the API server.";
  s.metric_prefix = "kubernetes_node";
  s.data_type = DataType::Metric;
  s.identifier = DataIdentifier::K8sNode;
  FieldSpec cond{"node_condition", FieldType::Object, FieldRole::Attribute, "",
                 "KubernetesNodeConditionRow: name, condition_type, status, reason, message"};
  cond.members = {
      {"name", FieldType::String, FieldRole::Identity, "", "node name"},
      {"condition_type", FieldType::String, FieldRole::Identity, "", "condition type"},
      {"status", FieldType::String, FieldRole::Identity, "", "True, False or Unknown"},
      {"reason", FieldType::String, FieldRole::Attribute, "", "the condition's reason (CamelCase)"},
      {"message", FieldType::String, FieldRole::Attribute, "", "the condition's message"},
  };
  s.fields = {
      {"ds", FieldType::String, FieldRole::Attribute, "", "collection date YYYY-MM-DD in America/Los_Angeles"},
      {"collection_unixtime", FieldType::Int, FieldRole::Attribute, "seconds", "unix time of the collection"},
      {"cluster", FieldType::String, FieldRole::Identity, "", "cluster name"},
      {"derived_cluster", FieldType::String, FieldRole::Identity, "", "the cluster"},
      cond,
  };
  s.info_labels = {"node_condition.reason"};
  return s;
}};

Value text_or_null(const std::string& s) { return s.empty() ? Value() : Value(s); }

class KubernetesMonitor : public Collector {
 public:
  explicit KubernetesMonitor(OptionBinder& b) {
    b.option("--namespace", "namespace", namespace_, "Namespace whose pods are listed (\"\": every namespace).")
        ->capture_default_str();
    b.option("--label-selector", "label_selector", label_selector_,
             "Label selector of the pods (\"\": all), e.g. app=slurmd,!canary.")
        ->capture_default_str();
    kube::add_access_options(b, access_, /*in_cluster_flag=*/true);
  }

  std::vector<CollectorTask> tasks(const CollectorContext&) override {
    return {
        {"pods", &kKubernetesPodPayload.get(), [this](const CollectorContext& c, RecordOut& o) { collect_pods(c, o); }},
        {"node_conditions", &kKubernetesNodePayload.get(),
         [this](const CollectorContext& c, RecordOut& o) { collect_nodes(c, o); }},
    };
  }

 private:
  kube::ApiClient& api() {
    if (!api_) api_ = kube::make_api_client(access_);  // at the first round: its error is the round's
    return *api_;
  }

  void collect_pods(const CollectorContext& ctx, RecordOut& out) {
    int64_t now = static_cast<int64_t>(std::time(nullptr));
    Record r(kKubernetesPodPayload);
    r[0] = sacctmgr::pacific_date(now);
    r[1] = now;
    r[2] = ctx.cluster;
    r[3] = ctx.cluster;
    kube::PodQuery q;
    q.namespace_ = namespace_;
    q.label_selector = label_selector_;
    // Rows go out as pods arrive, so a restarted list (an expired continue token) would emit some twice: rows are
    // held for the round and emitted once the list is whole. They are small (the filter kept a few fields).
    std::vector<kube::Pod> pods;
    kube::for_each_pod(
        api(), q, [&](const kube::Pod& p) { pods.push_back(p); }, [&] { pods.clear(); });
    for (const auto& p : pods) {
      auto row = [&](const kube::ContainerState* c) {
        Object o;
        o.reserve(7);
        o.push_back({"name", p.name});
        o.push_back({"namespace", p.namespace_});
        o.push_back({"node_name", text_or_null(p.node_name)});
        o.push_back({"phase", text_or_null(p.phase)});
        o.push_back({"restart_count", c ? c->restart_count : int64_t{0}});
        o.push_back({"container_name", c ? text_or_null(c->name) : Value()});
        auto job = p.annotation(kube::kSunkJobIdAnnotation);
        o.push_back({"slurm_job_id", job ? Value(*job) : Value()});
        r[4] = Value(std::move(o));
        out.emit(r);
      };
      if (p.containers.empty()) row(nullptr);
      for (const auto& c : p.containers) row(&c);
    }
    ctx.log->debug("kubernetes_monitor: {} pod(s) in {}", pods.size(),
                   namespace_.empty() ? "every namespace" : namespace_);
  }

  void collect_nodes(const CollectorContext& ctx, RecordOut& out) {
    int64_t now = static_cast<int64_t>(std::time(nullptr));
    Record r(kKubernetesNodePayload);
    r[0] = sacctmgr::pacific_date(now);
    r[1] = now;
    r[2] = ctx.cluster;
    r[3] = ctx.cluster;
    for (const auto& n : kube::list_nodes(api()))
      for (const auto& c : n.conditions) {
        Object o;
        o.push_back({"name", n.name});
        o.push_back({"condition_type", c.type});
        o.push_back({"status", c.status});
        o.push_back({"reason", text_or_null(c.reason)});
        o.push_back({"message", text_or_null(c.message)});
        r[4] = Value(std::move(o));
        out.emit(r);
      }
  }

  std::string namespace_;
  std::string label_selector_;
  kube::AccessOptions access_;
  std::unique_ptr<kube::ApiClient> api_;
};

const bool kKubernetesMonitorRegistered = register_collector({
    "kubernetes_monitor",
    "Pods and node conditions from the Kubernetes API server",
    "Pods (one KubernetesPodPayload per container status, with the SUNK Slurm job id) and node conditions (one "
    "KubernetesNodePayload per condition) from the Kubernetes API server. RBAC: list pods (in --namespace, or "
    "cluster-wide) and list nodes.",
    60,
    "kubernetes_monitor",
    [](OptionBinder& b) { return std::make_unique<KubernetesMonitor>(b); },
});
const bool kKubernetesMonitorSchemasRegistered =
    register_schema(&kKubernetesPodPayload) && register_schema(&kKubernetesNodePayload);

}  // namespace
}  // namespace gcm
