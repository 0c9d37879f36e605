// Shared by the slurm_processor unit tests (message path and wire path): the OTLP aliases, a job, the jobs of the
// test node, attribute setters, and the four kinds of points every metric type is tried with.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "logs_service.pb.h"
#include "metrics_service.pb.h"
#include "processor/node_jobs.h"
#include "trace_service.pb.h"

namespace gcm::processor::fixtures {

namespace pbc = opentelemetry::proto::common::v1;
namespace pbm = opentelemetry::proto::metrics::v1;
using MetricsReq = opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest;
using LogsReq = opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest;
using TracesReq = opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest;
using Attrs = google::protobuf::RepeatedPtrField<pbc::KeyValue>;

inline JobInfo job(int64_t id, const std::string& name, const std::string& user) {
  JobInfo j;
  j.job_id = id;
  j.job_name = name;
  j.job_user = user;
  j.job_qos = "normal";
  j.job_partition = "gpu";
  j.job_account = "acct";
  j.job_num_nodes = 1;
  return j;
}

// GPU 0 runs job 11, GPU 1 runs jobs 12 (array 12_1) and 13, GPU 2 is idle.
inline std::shared_ptr<const NodeJobs> node1_jobs() {
  JobInfo a = job(12, "train", "bob");
  a.array_job_id = 12;
  a.array_task_id = 1;
  return std::make_shared<const NodeJobs>(
      node_jobs_from({{0, {job(11, "prep", "alice")}}, {1, {a, job(13, "eval", "carol")}}, {2, {}}}));
}

// A Kubernetes node (the kubelet source): GPU 0 runs job 11 in SUNK's slurmd pod, GPU 1 job 12 in no pod, GPU 2
// a plain pod (no Slurm job; the kubelet named no container), GPU 3 idle.
inline std::shared_ptr<const NodeJobs> k8s_node_jobs() {
  JobInfo in_pod = job(11, "prep", "alice");
  in_pod.pod = "slurm-gpu-node-0";
  in_pod.pod_namespace = "slurm";
  in_pod.container = "slurmd";
  JobInfo pod_only;
  pod_only.pod = "notebook-7";
  pod_only.pod_namespace = "dev";
  return std::make_shared<const NodeJobs>(
      node_jobs_from({{0, {in_pod}}, {1, {job(12, "train", "bob")}}, {2, {pod_only}}, {3, {}}}));
}

inline void set_str(Attrs* a, const std::string& k, const std::string& v) {
  auto* kv = a->Add();
  kv->set_key(k);
  kv->mutable_value()->set_string_value(v);
}
inline void set_int(Attrs* a, const std::string& k, int64_t v) {
  auto* kv = a->Add();
  kv->set_key(k);
  kv->mutable_value()->set_int_value(v);
}

// Four points per metric: gpu "0" (string) with UUID, gpu 1 (int), gpu "2" (idle), no gpu.
template <typename Points>
void add_points(Points* pts) {
  auto* p0 = pts->Add();
  set_str(p0->mutable_attributes(), "gpu", "0");
  set_str(p0->mutable_attributes(), "UUID", "GPU-aaaa");
  set_int(pts->Add()->mutable_attributes(), "gpu", 1);
  set_str(pts->Add()->mutable_attributes(), "gpu", "2");
  set_str(pts->Add()->mutable_attributes(), "other", "x");
}

// Wire-format pieces for bodies protobuf would not write (fields out of order, twice, malformed).
inline std::string varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}
inline std::string len(uint32_t field, const std::string& content) {
  return varint(field << 3 | 2) + varint(content.size()) + content;
}

}  // namespace gcm::processor::fixtures
