// The telemetry record of a health check (the reference's HealthCheckLog), and the node's gpu_node_id.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/record.h"
#include "health/kubernetes_metadata.h"

namespace gcm::health {

extern const LazySchema kHealthCheckLog;

struct HealthCheckResult {
  std::string node, cluster, derived_cluster, health_check, type, msg;
  std::optional<std::string> gpu_node_id;
  int result = 3;
  int64_t job_id = 0;
  double start_time = 0, end_time = 0;
  // The Kubernetes metadata branches enabled (health/kubernetes_metadata.h): each adds its fields to the record,
  // null where the API server did not answer.
  bool kubernetes_jobs = false, kubernetes_pods = false;
  KubernetesMetadata kubernetes;
};

// HealthCheckLog: GCM's fields, plus each enabled Kubernetes branch's.
const Schema& health_check_schema(bool kubernetes_jobs = false, bool kubernetes_pods = false);
Record health_check_record(const HealthCheckResult& r);

// A stable id of the node's set of GPUs: a hash of the sorted UUIDs (64-bit FNV-1a, hex). The reference used
// blake3, so the values differ from GCM's; they are stable across reboots and GPU enumeration order.
std::string gpu_node_id_of(std::vector<std::string> uuids);
// Where checks that read NVML leave the id for checks that do not load NVML ($GCM_GPU_NODE_ID_FILE, else
// /var/tmp/gcm/gpu_node_id).
std::string gpu_node_id_file();
std::optional<std::string> read_gpu_node_id();
void write_gpu_node_id(const std::string& id);  // best effort

}  // namespace gcm::health
