// Draining a node for gcm's zombie-GPU detector, and resuming it, under the rules that make an automatic drain safe:
// never touch a drain whose reason is not gcm's; never drain more than a few nodes an hour across the cluster, nor
// more than a fraction of any partition the node is in (a fleet-wide effect, a bad rule or a noisy signal must not
// empty the cluster); resume only a drain the detector set. Both the agent (node-local verdicts) and `gcm drainer`
// (Alertmanager's webhook for cross-node verdicts) go through these functions: one mechanism, one set of limits.
//
// The limits are judged from slurmctld's own view (`scontrol show node`: every detector drain and the time Slurm
// stamped on its reason), not from memory of this process: several agents, a restarted drainer, or both together
// see the same count.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "suite/slurm_node.h"

namespace gcm::suite {

struct DrainLimits {
  int max_per_hour = 3;                 // detector drains whose reason is younger than an hour, cluster-wide
  double max_partition_fraction = 0.1;  // of each partition of the node: at least one node is always allowed
  size_t reason_max_length = 255;
  // After its drain, how long to wait before reading the limits back (drains decided at the same moment by other
  // agents land within this), to undo this one if it was one too many.
  double settle_seconds = 2;
};

struct DrainBudget {
  bool allowed = false;
  std::string why;  // when refused: which limit, with the counts
};

// How many of a partition's `total` nodes the detector may hold drained: floor(fraction * total), but at least one
// (a small partition must still be able to lose its broken node). The 1e-9 keeps 0.29 * 100 (28.999...
// in binary) at 29.
int partition_cap(double fraction, int64_t total);

// Whether one more detector drain of `node` fits the limits, given every node's state at `now` (Unix seconds).
DrainBudget judge_drain_budget(const std::string& node, const std::vector<NodeState>& nodes, const DrainLimits& limits,
                               int64_t now);

enum class DrainAction {
  Drained,         // scontrol update ... State=DRAIN sent
  WouldDrain,      // report-only: everything said yes, nothing sent
  AlreadyDrained,  // drained already (by gcm, or by anyone: then that reason stays)
  OtherReason,     // not drained, but carries a reason gcm did not set (e.g. an operator's note): left alone
  OverBudget,      // a limit said no
  Failed,          // scontrol failed or the node is unknown
};
const char* to_string(DrainAction a);

struct DrainOutcome {
  DrainAction action = DrainAction::Failed;
  std::string reason;   // the reason sent (or that would have been)
  std::string message;  // for the log: what was done and why
};

// "gcm: detector: <evidence>" within the limit's length.
std::string detector_reason(const std::string& evidence, size_t max_len);

// Drains `node` with detector_reason(evidence) when the rules allow it; `report_only` decides but sends nothing.
// After a drain it waits `settle_seconds` and reads the nodes again: when drains sent by others at the same moment
// put the cluster over a limit, the drains past it in slurmctld's order (reason time, then node name) are resumed,
// so the limit holds even for agents that judged it at once (OverBudget).
DrainOutcome drain_for_detector(const ScontrolRunner& scontrol, const std::string& node, const std::string& evidence,
                                const DrainLimits& limits, bool report_only, int64_t now);

// Resumes `node` when it is drained with a detector reason (State=RESUME). The caller has confirmed the node.
// Returns false, with `why`, when the node is not ours to resume (not drained, another reason, a job still on it).
bool resume_detector_drain(const ScontrolRunner& scontrol, const std::string& node, std::string& why);

}  // namespace gcm::suite
