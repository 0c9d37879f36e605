#include "agent/agent_job_signals.h"

#include <spdlog/spdlog.h>

#include "agent/agent.h"
#include "health/check.h"
#include "jobsignal/records.h"
#include "suite/slurm_node.h"

namespace gcm::agent {

jobsignal::JobSignalOptions job_signal_options(const AgentOptions& opts) {
  jobsignal::JobSignalOptions jo;
  jo.socket_path = opts.job_signal_socket.empty() ? opts.path_run + "/job-signals.sock" : opts.job_signal_socket;
  jo.listen = opts.job_signal_listen;
  jo.procfs = opts.path_procfs;
  jo.hostname = health::node_hostname();
  // Where a job's ranks are named in Slurm's words: the node its jobs and gcm jobstats call it by.
  jo.node_name = opts.slurm_node.empty() ? suite::slurm_node_name() : opts.slurm_node;
  return jo;
}

AgentJobSignals::~AgentJobSignals() { stop(); }

void AgentJobSignals::start(const AgentOptions& opts, AgentCounters& counters) {
  if (opts.no_job_signals) return;
  signals_ = std::make_unique<jobsignal::JobSignals>(job_signal_options(opts), log_);
  try {
    signals_->start();
    counters.source("job_signals").up = true;
  } catch (const std::invalid_argument& e) {
    throw AgentUsageError(e.what());  // --job-signal-listen is not a loopback HOST:PORT
  } catch (const std::exception& e) {
    log_->error("agent: job signals off: {}", e.what());
    counters.source("job_signals").failed(e.what());
    signals_.reset();
  }
}

void AgentJobSignals::close_window(std::vector<detector::GpuWindow>& summaries, double seconds,
                                   const GpuAddressMap& addresses, const JobAttribution& attribution,
                                   WindowExport& out) {
  if (!signals_) return;
  std::map<unsigned, std::string> uuids;
  for (const auto& g : addresses.identities())
    if (g.index >= 0 && !g.uuid.empty()) uuids[static_cast<unsigned>(g.index)] = g.uuid;
  signals_->set_node(uuids, attribution.users());
  jobsignal::WindowOutput w = signals_->close_window(summaries, seconds);
  ranks_ = rank_state_entries(w.judgements);
  out.publish(jobsignal::kJobStepSummary, w.summaries);
  out.publish(jobsignal::kJobSignalReceiver, w.receiver);
  out.publish(jobsignal::kJobSignalRefused, w.refused);
  out.publish(jobsignal::kJobSignalDropped, w.dropped);
  out.publish(jobsignal::kJobSlowdownState, w.slowdown_state);
  out.publish(jobsignal::kJobSlowdownLast, w.slowdown_last);
  for (Record& e : w.slowdown_events) out.add_log(std::move(e));
}

void AgentJobSignals::stop() { signals_.reset(); }

}  // namespace gcm::agent
