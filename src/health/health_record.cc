#include "health/health_record.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/schema.h"

namespace gcm::health {

namespace {

Schema gcm_health_check_log() {
  Schema s;
  s.name = "HealthCheckLog";
  s.description = "One health check's verdict (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN) on one node.";
  s.metric_prefix = "health_check";
  s.data_type = DataType::Log;
  s.fields = {
      {"node", FieldType::String, FieldRole::Identity, "", "host name"},
      {"gpu_node_id", FieldType::String, FieldRole::Attribute, "", "hash of the node's GPU UUIDs; null without GPUs"},
      {"cluster", FieldType::String, FieldRole::Identity, "", "CLUSTER argument"},
      {"derived_cluster", FieldType::String, FieldRole::Identity, "", "cluster, or cluster.<host prefix>"},
      {"health_check", FieldType::String, FieldRole::Identity, "", "the check's name, e.g. \"check zombie\""},
      {"type", FieldType::String, FieldRole::Identity, "", "prolog, epilog, nagios or app"},
      {"result", FieldType::Int, FieldRole::Gauge, "", "exit code", "health_check_result"},
      {"_msg", FieldType::String, FieldRole::Attribute, "", "message"},
      {"job_id", FieldType::Int, FieldRole::Attribute, "", "SLURM_JOB_ID for prolog/epilog, else 0"},
      {"start_time", FieldType::Double, FieldRole::Attribute, "seconds", "unix time the check started"},
      {"end_time", FieldType::Double, FieldRole::Attribute, "seconds", "unix time the check ended"},
  };
  return s;
}

// Built only where a Kubernetes branch is on: no static initialiser at every check's start.
Schema with_kubernetes(bool jobs, bool pods) {
  Schema s = gcm_health_check_log();
  const FieldType list = FieldType::List;
  const FieldRole attr = FieldRole::Attribute;
  if (jobs) {
    s.fields.push_back(
        {"active_job_ids", list, attr, "", "jobs of the node's active pods (GCM_KUBERNETES_JOB_ID_LABEL), sorted"});
    s.fields.push_back({"active_users", list, attr, "", "each job's GCM_KUBERNETES_USER_LABEL"});
    s.fields.push_back({"active_org_ids", list, attr, "", "each job's GCM_KUBERNETES_ORG_ID_LABEL"});
    s.fields.push_back({"active_project_ids", list, attr, "", "each job's GCM_KUBERNETES_PROJECT_ID_LABEL"});
    s.fields.push_back({"active_pod_names", list, attr, "", "each job's pod (the smallest name)"});
  }
  if (pods)
    s.fields.push_back({"pod_metadata", list, attr, "",
                        "the node's active pods with a GCM_KUBERNETES_METADATA_KEYS label or annotation, each as "
                        "compact JSON"});
  return s;
}

}  // namespace

constinit const LazySchema kHealthCheckLog{gcm_health_check_log};

namespace {

// Not registered: `gcm schemas` lists GCM's record; the Kubernetes fields are in docs/reference/health-checks.md.
constinit const LazySchema kHealthCheckLogJobs{[] { return with_kubernetes(true, false); }};
constinit const LazySchema kHealthCheckLogPods{[] { return with_kubernetes(false, true); }};
constinit const LazySchema kHealthCheckLogBoth{[] { return with_kubernetes(true, true); }};

Value health_string_list(const std::vector<std::string>& items) {
  List l;
  l.reserve(items.size());
  for (const auto& i : items) l.emplace_back(i);
  return Value(std::move(l));
}

}  // namespace

static const bool kHealthRecordRegistered = register_schema(&kHealthCheckLog);

const Schema& health_check_schema(bool kubernetes_jobs, bool kubernetes_pods) {
  if (kubernetes_jobs && kubernetes_pods) return kHealthCheckLogBoth;
  if (kubernetes_jobs) return kHealthCheckLogJobs;
  if (kubernetes_pods) return kHealthCheckLogPods;
  return kHealthCheckLog;
}

Record health_check_record(const HealthCheckResult& r) {
  Record rec(health_check_schema(r.kubernetes_jobs, r.kubernetes_pods));
  rec.at("node") = r.node;
  rec.at("gpu_node_id") = r.gpu_node_id ? Value(*r.gpu_node_id) : Value();
  rec.at("cluster") = r.cluster;
  rec.at("derived_cluster") = r.derived_cluster;
  rec.at("health_check") = r.health_check;
  rec.at("type") = r.type;
  rec.at("result") = static_cast<int64_t>(r.result);
  rec.at("_msg") = r.msg;
  rec.at("job_id") = r.job_id;
  rec.at("start_time") = r.start_time;
  rec.at("end_time") = r.end_time;
  if (r.kubernetes_jobs && r.kubernetes.jobs) {
    const KubernetesJobMetadata& j = *r.kubernetes.jobs;
    rec.at("active_job_ids") = health_string_list(j.job_ids);
    rec.at("active_users") = health_string_list(j.users);
    rec.at("active_org_ids") = health_string_list(j.org_ids);
    rec.at("active_project_ids") = health_string_list(j.project_ids);
    rec.at("active_pod_names") = health_string_list(j.pod_names);
  }
  if (r.kubernetes_pods && r.kubernetes.pod_metadata)
    rec.at("pod_metadata") = health_string_list(*r.kubernetes.pod_metadata);
  return rec;
}

std::string gpu_node_id_of(std::vector<std::string> uuids) {
  std::sort(uuids.begin(), uuids.end());
  uint64_t h = 1469598103934665603ull;
  for (const auto& u : uuids)
    for (unsigned char c : u + "\n") {
      h ^= c;
      h *= 1099511628211ull;
    }
  return fmt::format("{:016x}", h);
}

std::string gpu_node_id_file() {
  const char* env = std::getenv("GCM_GPU_NODE_ID_FILE");
  return env && *env ? env : "/var/tmp/gcm/gpu_node_id";
}

std::optional<std::string> read_gpu_node_id() {
  std::ifstream in(gpu_node_id_file());
  std::string id;
  if (in && std::getline(in, id) && !id.empty()) return id;
  return std::nullopt;
}

void write_gpu_node_id(const std::string& id) {
  std::error_code ec;
  std::filesystem::path p(gpu_node_id_file());
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  // A temp name of its own: several checks of one suite may write the file at once, from processes or threads.
  std::string tmp = p.string() + ".XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return;
  std::string line = id + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ok = ::fchmod(fd, 0644) == 0 && ok;
  ::close(fd);
  if (ok) std::filesystem::rename(tmp, p, ec);
  if (!ok || ec) std::filesystem::remove(tmp, ec);
}

}  // namespace gcm::health
