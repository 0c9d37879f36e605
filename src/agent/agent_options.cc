#include "agent/agent_options.h"

#include "suite/drain_limit_options.h"
#include "cli/option_binder.h"
#include "core/host_roots.h"
#include "cli/option_limits.h"

#include <cctype>
#include <stdexcept>
#include <string>

namespace gcm::agent {

void add_agent_options(OptionBinder& b, AgentOptions& o) {
  b.option("--collect-interval", "collect_interval", o.collect_interval_s,
           "Seconds between two samples of every GPU (0.01 s to 366 days).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(sampling_seconds());
  b.option("--window", "window", o.window_s,
           "Seconds of samples summarised into one window (min, max, mean and last per field): what /metrics, OTLP, "
           "the state file and the zombie-GPU detector see.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(sampling_seconds());
  b.option("--nvml-library", "nvml_library", o.nvml_library,
           "Path of libnvidia-ml.so.1 (default: $GCM_NVML_LIBRARY, else the dynamic loader's search).");
  b.option("--amdsmi-library", "amdsmi_library", o.amdsmi_library,
           "Path of AMD's libamd_smi.so, used on AMD nodes (gcm --backend amdsmi or auto; default: "
           "$GCM_AMDSMI_LIBRARY, else the dynamic loader's search).");
  b.option("--nvml-timeout", "nvml_timeout", o.nvml_timeout_s,
           "Seconds one call of the GPU library (NVML, or amdsmi under gcm --backend amdsmi) may take before its GPU "
           "is reported not responding (lost after 3 samples); the other GPUs are sampled meanwhile.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  b.flag("--no-extended", "no_extended", o.no_extended,
         "Sample only GCM's fields (utilisation, memory, temperature, power, retired pages).");
  add_host_root_option(b, kKmsgRoot, o.path_kmsg,
                       "The kernel log to follow for XIDs, NVSwitch SXids, link flaps, machine checks and PCIe AER "
                       "errors: /dev/kmsg, or a FIFO or file of its records.");
  add_host_root_option(b, kProcfsRoot, o.path_procfs, "Where /proc is mounted.");
  add_host_root_option(b, kSysfsRoot, o.path_sysfs, "Where /sys is mounted (cgroups under fs/cgroup).");
  add_host_root_option(b, kRunRoot, o.path_run,
                       "Where the agent keeps agent-state.json, the view `gcm agent status` and the prolog's "
                       "agent-verdict check read.");
  b.option(
       "--attribution", "attribution", o.attribution,
       "GPU -> job sources, tried in order per GPU: nvml-processes, slurmd-local, slurmctld, cgroup, "
       "mapping-files, kubelet (see `gcm nvml_monitor --help`). Re-resolved when a GPU's processes change, a mapping "
       "file changes, or after --attribution-refresh.")
      ->delimiter(',')
      ->capture_default_str();
  b.option("--slurm-node", "slurm_node", o.slurm_node,
           "This node's Slurm name: what it drains and names GPUs by in job-slowdown explanations (default: "
           "$SLURMD_NODENAME, else the short host name).");
  b.option("--gpu-job-mapping-dir", "gpu_job_mapping_dir", o.gpu_job_mapping_dir,
           "Directory of the mapping-files source (the prolog writes <dir>/<gpu index> = job id); watched with "
           "inotify.")
      ->capture_default_str();
  add_kubelet_attribution_options(b, o.kubelet);
  kube::add_access_options(b, o.kubernetes_api, /*in_cluster_flag=*/false);
  b.option("--attribution-refresh", "attribution_refresh", o.attribution_refresh_s,
           "Seconds after which the attribution is resolved again even if no change was seen.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(round_interval_seconds());
  b.option("--xid-clear-after", "xid_clear_after", o.xid_clear_after_s,
           "Seconds after which an XID whose catalogue action needs neither a GPU reset nor a reboot (RESTART_APP, "
           "IGNORE, ...) stops being active if it did not repeat; the same for the node's pcie_aer reason after a "
           "non-fatal PCIe AER error on an address that is none of its GPUs.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  b.option("--listen", "listen", o.listen,
           "HOST:PORT of /metrics (:PORT: every IPv4 address; \"\": no listener). Served from the last window, never "
           "waiting on NVML.")
      ->capture_default_str();
  b.option("--web.config.file", "web_config_file", o.web_config_file,
           "TLS and authentication of /metrics, in Prometheus exporter-toolkit's web config format (YAML).");
  b.option("--textfile", "textfile", o.textfile,
           "Also write the metrics to this file after each window, atomically, for node_exporter's textfile "
           "collector (a path ending in .prom).");
  b.option(
      "--otlp-endpoint", "otlp_endpoint", o.otlp_endpoint,
      "OTLP base URL to push each window's metrics and logs to (http://host:4318, or host:4317 with --otlp-protocol "
      "grpc); \"\": no push. Windows the receiver does not take are kept in --spool-dir and sent in order later.");
  b.option("--otlp-protocol", "otlp_protocol", o.otlp_protocol, "http/protobuf, http/json or grpc.")
      ->capture_default_str()
      ->check(CLI::IsMember({"http/protobuf", "http/json", "grpc"}));
  b.option("--otlp-header", "otlp_headers", o.otlp_headers, "'Name: value' header of every OTLP request (repeatable).");
  b.flag("--otlp-gzip", "otlp_gzip", o.otlp_gzip, "gzip OTLP request bodies.");
  b.option("--otlp-timeout", "otlp_timeout", o.otlp_timeout_s, "Seconds one OTLP request may take.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
  b.option("--spool-dir", "spool_dir", o.spool_dir,
           "Where windows wait while the OTLP receiver is unreachable (0700, this user's own).")
      ->capture_default_str();
  b.option("--spool-max-bytes", "spool_max_bytes", o.spool_max_bytes,
           "Largest size of the spool (bytes, or with a suffix: 512MiB, 1GB); when full the oldest window is dropped "
           "and counted in gcm_agent_dropped_points_total.")
      ->capture_default_str();
  b.option("--job-signal-socket", "job_signal_socket", o.job_signal_socket,
           "Unix socket on which the node's training jobs send their step times (OTLP/HTTP metrics, POST "
           "/v1/metrics; docs/reference/job-signals.md); default <--path.run>/job-signals.sock. Each request is "
           "attributed to a job, rank and GPU by its sender's credentials, never by what it claims.");
  b.option("--job-signal-listen", "job_signal_listen", o.job_signal_listen,
           "Also take job signals over TCP on this loopback HOST:PORT (127.0.0.1:4318 for NCCL Inspector's default, "
           "or [::1]:PORT); "
           "\"\": no TCP endpoint.");
  b.flag("--no-job-signals", "no_job_signals", o.no_job_signals,
         "Take no job signals (no socket, no TCP endpoint, no rank_slow).");
  b.option("--suite", "suite", o.suite,
           "Suite file whose [agent] profile lists the health checks the agent runs in-process every "
           "--check-interval (absent file or profile: none).")
      ->capture_default_str();
  b.option("--check-interval", "check_interval", o.check_interval_s, "Seconds between two runs of the agent's checks.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(round_interval_seconds());
  b.flag("--drain", "drain", o.drain,
         "Drain this node (scontrol update State=DRAIN Reason=\"gcm: detector: <evidence>\") when a GPU is "
         "degraded or failed, and resume a node the detector drained once it is idle and the suite's [confirm] "
         "checks pass. Off: report only (the log says what would have been done). Never touches a drain whose "
         "reason gcm did not set.");
  add_drain_limit_options(b, o.drain_limits);
  b.flag("--kubernetes-condition", "kubernetes_condition", o.kubernetes_condition,
         "On Kubernetes: where a Slurm node would be drained, set the node condition GcmGpuHealthy=False with the "
         "evidence as its message (RBAC: list and get nodes, patch nodes/status), under the drain limits counted "
         "over the cluster's nodes; set it True again after the [confirm] checks pass. Without --drain, Slurm is "
         "then not asked. The node is --kubernetes-node, else $NODE_NAME.");
  b.flag("--kubernetes-cordon", "kubernetes_cordon", o.kubernetes_cordon,
         "With --kubernetes-condition: also cordon the node (spec.unschedulable; RBAC: get and patch nodes). Only "
         "a cordon gcm set is lifted (annotation gcm.dev/cordoned-by-gcm); an operator's stays.");
  b.flag("--kubernetes-taint", "kubernetes_taint", o.kubernetes_taint,
         "With --kubernetes-condition: also taint the node gcm.dev/gpu-unhealthy=true:NoSchedule (RBAC: get and "
         "patch nodes); removed with the condition.");
  b.option("--drain-poll-interval", "drain_poll_interval", o.drain_poll_interval_s,
           "With --drain: seconds between two questions to slurmctld, while no job runs here, whether the "
           "detector's drain is on this node (one `scontrol show node` each; at once after the agent's own drain).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(round_interval_seconds());
  b.option("--log-level", "log_level", o.log_level, "DEBUG, INFO, WARNING, ERROR or CRITICAL.")->capture_default_str();
  b.option("--log-folder", "log_folder", o.log_folder, "Log directory (<folder>/agent_logs/agent.log).")
      ->capture_default_str();
  b.flag("--stdout", "stdout", o.log_stdout, "Log to stdout instead of the log folder.");
}

}  // namespace gcm::agent

namespace gcm::agent {

uint64_t parse_byte_size(const std::string& text) {
  auto bad = [&] {
    return std::invalid_argument("'" + text +
                                 "' is not a size: expected a number of bytes with an optional suffix k, M, G, T, "
                                 "KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)");
  };
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == 0) throw bad();
  double number = 0;
  try {
    size_t used = 0;
    number = std::stod(text.substr(0, i), &used);
    if (used != i) throw bad();
  } catch (const std::logic_error&) {
    throw bad();
  }
  std::string suffix = text.substr(i);
  while (!suffix.empty() && suffix.front() == ' ') suffix.erase(0, 1);
  static const std::pair<const char*, double> kSuffixes[] = {{"", 1},
                                                             {"B", 1},
                                                             {"k", 1e3},
                                                             {"K", 1e3},
                                                             {"KB", 1e3},
                                                             {"kB", 1e3},
                                                             {"M", 1e6},
                                                             {"MB", 1e6},
                                                             {"G", 1e9},
                                                             {"GB", 1e9},
                                                             {"T", 1e12},
                                                             {"TB", 1e12},
                                                             {"KiB", 1024.0},
                                                             {"MiB", 1048576.0},
                                                             {"GiB", 1073741824.0},
                                                             {"TiB", 1099511627776.0}};
  for (const auto& [s, mult] : kSuffixes)
    if (suffix == s) {
      double bytes = number * mult;
      if (!(bytes >= 1) || bytes > 1e18) throw std::invalid_argument("'" + text + "': the size must be 1 byte to 1 EB");
      return static_cast<uint64_t>(bytes);
    }
  throw bad();
}

}  // namespace gcm::agent
