#include "agent/agent_drain.h"

#include <cstdlib>

#include <spdlog/spdlog.h>

#include "agent/agent_schemas.h"
#include "suite/slurm_node.h"
#include "suite/suite_file.h"

namespace gcm::agent {

DrainControlOptions drain_control_options(const AgentOptions& opts) {
  DrainControlOptions d;
  d.drain = opts.drain;
  d.node = opts.slurm_node.empty() ? suite::slurm_node_name() : opts.slurm_node;
  d.limits = opts.drain_limits;
  d.poll_interval_s = opts.drain_poll_interval_s;
  d.suite_path = opts.suite;
  try {
    suite::SuiteFile s = suite::load_suite(opts.suite);
    d.scontrol = s.scontrol;
    d.slurm_conf = s.slurm_conf;
    d.slurm_timeout_s = s.slurm_timeout_s;
    d.limits.reason_max_length = s.reason_max_length;
  } catch (const std::exception&) {
    // No suite file: scontrol from PATH and the usual places; the checks' loading has said what is wrong with it.
  }
  d.kubernetes = opts.kubernetes_condition;
  d.kubernetes_node.node = opts.kubelet.node_name;
  if (d.kubernetes_node.node.empty())
    if (const char* n = std::getenv("NODE_NAME")) d.kubernetes_node.node = n;
  d.kubernetes_node.cordon = opts.kubernetes_cordon;
  d.kubernetes_node.taint = opts.kubernetes_taint;
  d.kubernetes_api = opts.kubernetes_api;
  return d;
}

void AgentDrain::load(const AgentOptions& opts) {
  drain_.reset();  // waits for a task in flight
  DrainControlOptions d = drain_control_options(opts);
  if (d.kubernetes)
    log_->info("agent: Kubernetes node {} is marked {}=False on a bad verdict{}{}", d.kubernetes_node.node,
               kube::kGpuHealthyCondition, d.kubernetes_node.cordon ? ", cordoned" : "",
               d.kubernetes_node.taint ? ", tainted" : "");
  if (opts.drain)
    log_->info("agent: drain on for node {} (at most {} detector drains an hour, {:g} % of a partition)", d.node,
               d.limits.max_per_hour, d.limits.max_partition_fraction * 100);
  drain_ = std::make_unique<DrainControl>(std::move(d), log_);
}

void AgentDrain::on_window(const std::vector<detector::GpuVerdict>& verdicts, bool node_has_job,
                           detector::Detector& detector, WindowExport& out) {
  if (!drain_) return;
  if (drain_->on_window(verdicts, node_has_job)) detector.forgive_load_only_reasons();
  std::vector<Record> counts;
  for (const auto& [action, n] : drain_->counts()) {
    Record r(kAgentDrain);
    r.at("action") = action;
    r.at("actions") = static_cast<int64_t>(n);
    counts.push_back(std::move(r));
  }
  out.publish(kAgentDrain, counts);
}

}  // namespace gcm::agent
