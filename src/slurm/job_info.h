// The Slurm job a GPU works for, as the reference's JobInfo reads it from a process environment, plus the keys the
// OTLP processor and the join series use (account, qos, array ids). A plain value of Slurm's job keys, here below
// gpu/ and attribution/: the GPU records carry it and attribution/ finds it (attribution/job_info.h), so neither of
// those two folders includes the other both ways.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gcm {

struct JobInfo {
  int64_t job_id = -1;  // -1: no job (the reference's default)
  std::optional<std::string> job_user, job_gpus, job_name, job_partition, job_account, job_qos;
  std::optional<int64_t> job_num_gpus, job_num_cpus, job_num_nodes, array_job_id, array_task_id;
  std::optional<double> job_cpus_per_gpu;
  // On a Kubernetes node: the pod and container the kubelet gave the GPU to (attribution/kubelet_pods.h). With
  // Slurm on Kubernetes both the job and the pod are known; on a plain Kubernetes node only the pod (job_id -1).
  std::optional<std::string> pod, pod_namespace, container;

  bool has_job() const { return job_id >= 0; }
};

}  // namespace gcm
