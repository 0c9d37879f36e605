// gcm agent: the one process per GPU node that watches the GPUs all the time.
//
//   sampling thread (this class's run()): every --collect-interval, one sample of every GPU through the per-GPU
//     workers (gpu/gpu_sampler.h: a hung GPU stalls only itself); every --window, the window is closed:
//       - summaries go to the zombie-GPU detector, which gives each GPU its health and reasons,
//       - records (IndexedDeviceMetrics, GpuJobInfo, XIDs, health, self-metrics) replace the Prometheus page,
//         go to the textfile and, through the on-disk spool, to OTLP,
//       - the state file (agent_state.h) is replaced for the prolog's agent-verdict check.
//   kmsg and NVML-event threads: XIDs as they happen, de-duplicated by the XID tracker; the kernel log's other
//     hardware events (SXids, link flaps, machine checks, PCIe AER) counted by the kernel-event tracker.
//   the HTTP listener's I/O thread: /metrics from the last window's page (never waits on NVML).
//   the job-signal endpoint (jobsignal/job_signals.h): the node's training jobs' step times, judged each window.
// NVML that is missing at start, or a driver reloaded later, is retried with backoff; the rest keeps running.
// The parts, each saying which of its members another thread reaches: nvml_session.h, job_attribution.h,
// hardware_events.h, window_export.h, metrics_endpoint.h, agent_checks.h, agent_drain.h, agent_job_signals.h,
// agent_counters.h, window_state.h.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <stdexcept>
#include <memory>
#include <mutex>
#include <string>

#include "core/usage_error.h"
#include "agent/agent_options.h"

namespace spdlog {
class logger;
}

namespace gcm::agent {

// A start-up failure that is the operator's configuration (an OTLP endpoint that is not a URL, an untrusted spool
// directory): exit 2, like a bad option.
struct AgentUsageError : UsageError {
  using UsageError::UsageError;
};

class Agent {
 public:
  Agent(AgentOptions opts, std::shared_ptr<spdlog::logger> log);
  ~Agent();
  // Runs until shutdown_requested() (SIGTERM/SIGINT); flushes every sink; returns the exit code (0).
  // Throws std::runtime_error for start-up failures that are the operator's (a listener that cannot bind).
  int run();
  // Asks the loop to take new options at its next sample.
  void reload(AgentOptions opts);
  // Where new options come from on SIGHUP (the config file read again under the same command line); nullopt when
  // they are bad (the error is logged and the running options stay).
  void set_reload_source(std::function<std::optional<AgentOptions>()> source);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Installs the SIGHUP handler; take_reload_request() returns true once per signal.
void install_reload_handler();
bool take_reload_request();

}  // namespace gcm::agent
