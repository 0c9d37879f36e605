// Every option of `gcm agent`, on the command line and in the config file's [gcm.agent] table (keys are the
// parameter names below, e.g. collect_interval = 1). SIGHUP re-reads the table; the command line still wins.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attribution/gpu_jobs.h"
#include "suite/detector_drain.h"

namespace gcm {
class OptionBinder;
}

namespace gcm::agent {

struct AgentOptions {
  // Sampling.
  double collect_interval_s = 1;
  double window_s = 30;
  std::string backend = "nvml";  // gcm --backend: nvml, amdsmi or auto (gpu/gpu_backend_choice.h)
  std::optional<std::string> nvml_library;
  std::optional<std::string> amdsmi_library;
  double nvml_timeout_s = 5;  // every call of the GPU library in use, NVML or amdsmi
  bool no_extended = false;
  // Host roots.
  std::string path_kmsg = "/dev/kmsg";
  std::string path_procfs = "/proc";
  std::string path_sysfs = "/sys";
  std::string path_run = "/run/gcm";
  // Attribution.
  std::vector<std::string> attribution = {"nvml-processes", "mapping-files"};
  std::string slurm_node;
  std::string gpu_job_mapping_dir = "/run/gcm/gpu-jobs";
  double attribution_refresh_s = 60;   // the longest an attribution is kept without a change having been seen
  KubeletAttributionOptions kubelet;   // --attribution kubelet
  kube::AccessOptions kubernetes_api;  // the API server: DRA lookups of the kubelet attribution
  // XIDs.
  double xid_clear_after_s = 3600;
  // Export.
  std::string listen = ":9410";  // "" : no /metrics listener
  std::string web_config_file;
  std::string textfile;
  std::string otlp_endpoint;  // "" : no OTLP push
  std::string otlp_protocol = "http/protobuf";
  std::vector<std::string> otlp_headers;
  bool otlp_gzip = false;
  double otlp_timeout_s = 10;
  std::string spool_dir = "/var/lib/gcm/agent-spool";
  std::string spool_max_bytes = "256MiB";
  // The jobs' own signal (docs/reference/job-signals.md).
  bool no_job_signals = false;
  std::string job_signal_socket;  // "" : <path_run>/job-signals.sock
  std::string job_signal_listen;  // "" : no TCP endpoint
  // Health checks.
  std::string suite = "/etc/gcm/suite.toml";
  double check_interval_s = 300;
  // Drain (off: report only). See agent/drain_control.h.
  bool drain = false;
  // Kubernetes (kubernetes/node_health.h): mark the node where a Slurm node would be drained; cordon and taint too.
  bool kubernetes_condition = false, kubernetes_cordon = false, kubernetes_taint = false;
  suite::DrainLimits drain_limits;  // its reason length comes from the suite's [slurm] reason_max_length
  double drain_poll_interval_s = 300;
  // Logging.
  std::string log_level = "INFO";
  std::string log_folder = "/var/log/gcm";
  bool log_stdout = false;
};

// Adds the options to the agent's subcommand.
void add_agent_options(OptionBinder& b, AgentOptions& o);

}  // namespace gcm::agent

namespace gcm::agent {
// "268435456", "256MiB", "1GB", "512k": bytes (k/M/G/T and KB/MB/GB/TB are powers of 1000, KiB/MiB/GiB/TiB of
// 1024). Throws std::invalid_argument naming the value and what is accepted.
uint64_t parse_byte_size(const std::string& text);
}  // namespace gcm::agent
