// What the agent does on Kubernetes where a Slurm node would be drained: a node condition GcmGpuHealthy=False with
// the detector's evidence as its message (what node-problem-detector's conditions look like, so the same alerts
// and remediation controllers see it), and, each opt-in, a cordon (spec.unschedulable) and a taint
// gcm.dev/gpu-unhealthy:NoSchedule.
//
// The rules are the drains' (suite/detector_drain.h), judged from the API server's view so that every agent of the
// cluster counts the same marks: no more than --drain-max-per-hour nodes marked in the last hour (the condition's
// lastTransitionTime), never more than --drain-max-partition-fraction of the cluster's nodes marked at once (one
// node always allowed); marks sent at the same moment by several agents are settled as drains are (read back after
// settle_seconds, the ones past a limit taken back). Nothing gcm did not do is undone: a cordon is lifted only when gcm set it (the annotation
// gcm.dev/cordoned-by-gcm records that), an operator's cordon stays; only gcm's own taint key is removed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kubernetes/api_client.h"
#include "kubernetes/objects.h"
#include "suite/detector_drain.h"

namespace gcm::kube {

inline constexpr const char* kGpuHealthyCondition = "GcmGpuHealthy";
inline constexpr const char* kGpuUnhealthyTaint = "gcm.dev/gpu-unhealthy";
inline constexpr const char* kCordonedByGcmAnnotation = "gcm.dev/cordoned-by-gcm";
// The API server refuses nothing shorter; NPD keeps its condition messages this short as well.
inline constexpr size_t kConditionMessageMax = 1024;

struct NodeHealthOptions {
  std::string node;  // this node's Kubernetes name
  bool cordon = false;
  bool taint = false;
  suite::DrainLimits limits;
};

enum class NodeMarkAction {
  Marked,         // the condition (and cordon/taint) set
  WouldMark,      // report-only: everything said yes, nothing sent
  AlreadyMarked,  // GcmGpuHealthy is False already
  OverBudget,     // a limit said no
  Failed,         // the API server refused or could not be reached
  Cleared,        // the condition set True again, gcm's taint and cordon lifted
  NotMarked,      // nothing of gcm's to clear
};
const char* to_string(NodeMarkAction a);

struct NodeMarkOutcome {
  NodeMarkAction action = NodeMarkAction::Failed;
  std::string message;  // for the log
};

// Whether one more node may be marked, given every node of the cluster at `now` (Unix seconds).
suite::DrainBudget judge_mark_budget(const std::string& node, const std::vector<Node>& nodes,
                                     const suite::DrainLimits& limits, int64_t now);

// Marks the node unhealthy with `evidence` when the limits allow. Throws nothing: failures are the outcome.
NodeMarkOutcome mark_node_unhealthy(ApiClient& api, const NodeHealthOptions& o, const std::string& evidence,
                                    bool report_only, int64_t now);
// After a passed confirmation: GcmGpuHealthy=True, gcm's taint removed, gcm's cordon lifted.
NodeMarkOutcome clear_node_mark(ApiClient& api, const NodeHealthOptions& o, int64_t now);
// Whether the node carries gcm's mark (GcmGpuHealthy=False).
bool node_marked(const Node& n);

}  // namespace gcm::kube
