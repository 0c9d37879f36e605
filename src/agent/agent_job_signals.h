// The agent's job-signal endpoint (jobsignal/job_signals.h): the node's training jobs report their step times, and
// each window judges them: rank_slow into the detector's input, per-job summaries onto /metrics and OTLP.
// Owned by the sampling thread (Agent::run); the endpoint's listener thread hands reports over under JobSignals'
// own lock.
#pragma once

#include <memory>
#include <vector>

#include "agent/agent_counters.h"
#include "agent/agent_options.h"
#include "agent/gpu_address_map.h"
#include "agent/job_attribution.h"
#include "agent/job_signal_ranks.h"
#include "agent/window_export.h"
#include "detector/detector.h"
#include "jobsignal/job_signals.h"

namespace spdlog {
class logger;
}

namespace gcm::agent {

// The endpoint's options: the socket under --path.run unless --job-signal-socket names one.
jobsignal::JobSignalOptions job_signal_options(const AgentOptions& opts);

class AgentJobSignals {
 public:
  explicit AgentJobSignals(std::shared_ptr<spdlog::logger> log) : log_(std::move(log)) {}
  ~AgentJobSignals();

  // Starts the endpoint unless --no-job-signals. A --job-signal-listen that is not a loopback HOST:PORT throws
  // AgentUsageError; a socket that cannot be bound turns job signals off (the GPUs are watched without them), said
  // in the log and in the "job_signals" source.
  void start(const AgentOptions& opts, AgentCounters& counters);
  bool running() const { return signals_ != nullptr; }
  // The window's judgement: rank_slow into `summaries`, the series into `out`. The GPUs' UUIDs and the jobs' users
  // come from what the agent knows of them.
  void close_window(std::vector<detector::GpuWindow>& summaries, double seconds, const GpuAddressMap& addresses,
                    const JobAttribution& attribution, WindowExport& out);
  void stop();
  // The ranks judged in the last window, for the state file and `gcm agent status`.
  const std::vector<RankStateEntry>& ranks() const { return ranks_; }

 private:
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<jobsignal::JobSignals> signals_;
  std::vector<RankStateEntry> ranks_;
};

}  // namespace gcm::agent
