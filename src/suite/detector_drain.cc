#include "suite/detector_drain.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include <fmt/format.h>

namespace gcm::suite {

namespace {

bool detector_drained(const NodeState& n) { return n.drain && needs_confirmation(n.reason); }

bool recent(const NodeState& n, int64_t now) { return !n.reason_time || now - *n.reason_time < 3600; }

// Whether `node`'s own detector drain is within the limits, counting the drains in the order slurmctld stamped them
// (reason time, then node name): agents that each judged the budget before the others' drains landed all see the
// same order afterwards, so exactly the drains past the limit are the ones undone.
bool drain_within_limits(const std::string& node, const std::vector<NodeState>& nodes, const DrainLimits& limits,
                         int64_t now) {
  auto earlier = [](const NodeState* a, const NodeState* b) {
    int64_t ta = a->reason_time.value_or(0), tb = b->reason_time.value_or(0);
    return ta != tb ? ta < tb : a->name < b->name;
  };
  auto rank = [&](auto&& counted) {  // how many counted drains come before `node`'s own
    const NodeState* self = nullptr;
    std::vector<const NodeState*> drains;
    for (const auto& n : nodes) {
      if (!detector_drained(n) || !counted(n)) continue;
      drains.push_back(&n);
      if (n.name == node) self = &n;
    }
    if (!self) return size_t{0};
    return static_cast<size_t>(
        std::count_if(drains.begin(), drains.end(), [&](const NodeState* d) { return earlier(d, self); }));
  };
  if (rank([&](const NodeState& n) { return recent(n, now); }) >= static_cast<size_t>(limits.max_per_hour))
    return false;
  auto self = std::find_if(nodes.begin(), nodes.end(), [&](const NodeState& n) { return n.name == node; });
  if (self == nodes.end()) return true;
  for (const auto& part : self->partitions) {
    auto in_part = [&](const NodeState& n) {
      return std::find(n.partitions.begin(), n.partitions.end(), part) != n.partitions.end();
    };
    auto total = std::count_if(nodes.begin(), nodes.end(), in_part);
    if (rank(in_part) >= static_cast<size_t>(partition_cap(limits.max_partition_fraction, total))) return false;
  }
  return true;
}

}  // namespace

int partition_cap(double fraction, int64_t total) {
  return std::max(1, static_cast<int>(std::floor(fraction * static_cast<double>(total) + 1e-9)));
}

const char* to_string(DrainAction a) {
  switch (a) {
    case DrainAction::Drained:
      return "drained";
    case DrainAction::WouldDrain:
      return "would_drain";
    case DrainAction::AlreadyDrained:
      return "already_drained";
    case DrainAction::OtherReason:
      return "other_reason";
    case DrainAction::OverBudget:
      return "over_budget";
    case DrainAction::Failed:
      return "failed";
  }
  return "?";
}

std::string detector_reason(const std::string& evidence, size_t max_len) {
  return drain_reason(kDetectorCheckName, evidence, max_len);
}

DrainBudget judge_drain_budget(const std::string& node, const std::vector<NodeState>& nodes, const DrainLimits& limits,
                               int64_t now) {
  const NodeState* self = nullptr;
  int last_hour = 0;
  for (const auto& n : nodes) {
    if (n.name == node) self = &n;
    // A reason without a time (never seen from slurmctld, but possible from an old version) counts as recent: the
    // limit errs on the side of draining less.
    if (detector_drained(n) && recent(n, now)) ++last_hour;
  }
  if (last_hour >= limits.max_per_hour)
    return {false, fmt::format("{} detector drain(s) in the last hour across the cluster (limit {})", last_hour,
                               limits.max_per_hour)};
  if (!self) return {true, ""};
  for (const auto& part : self->partitions) {
    int total = 0, drained = 0;
    for (const auto& n : nodes) {
      if (std::find(n.partitions.begin(), n.partitions.end(), part) == n.partitions.end()) continue;
      ++total;
      if (detector_drained(n)) ++drained;
    }
    int cap = partition_cap(limits.max_partition_fraction, total);
    if (drained + 1 > cap)
      return {false, fmt::format("partition {} has {} of its {} nodes drained by the detector (limit {:g} % = {} "
                                 "node(s))",
                                 part, drained, total, limits.max_partition_fraction * 100, cap)};
  }
  return {true, ""};
}

DrainOutcome drain_for_detector(const ScontrolRunner& scontrol, const std::string& node, const std::string& evidence,
                                const DrainLimits& limits, bool report_only, int64_t now) {
  DrainOutcome out;
  out.reason = detector_reason(evidence, limits.reason_max_length);
  std::vector<NodeState> nodes;
  try {
    nodes = show_nodes(scontrol);
  } catch (const std::exception& e) {
    out.message = fmt::format("cannot read the nodes' states: {}", e.what());
    return out;
  }
  auto self = std::find_if(nodes.begin(), nodes.end(), [&](const NodeState& n) { return n.name == node; });
  if (self == nodes.end()) {
    out.message = fmt::format("node {} is not in slurmctld's node list", node);
    return out;
  }
  if (self->drain) {
    out.action = DrainAction::AlreadyDrained;
    out.message = fmt::format("node {} is already drained (state {}, reason '{}'): nothing sent", node, self->state,
                              self->reason);
    return out;
  }
  if (!self->reason.empty()) {
    out.action = DrainAction::OtherReason;
    out.message = fmt::format(
        "node {} carries the reason '{}' (state {}), which the detector did not set: left "
        "alone",
        node, self->reason, self->state);
    return out;
  }
  DrainBudget budget = judge_drain_budget(node, nodes, limits, now);
  if (!budget.allowed) {
    out.action = DrainAction::OverBudget;
    out.message = fmt::format("not draining node {}: {}", node, budget.why);
    return out;
  }
  if (report_only) {
    out.action = DrainAction::WouldDrain;
    out.message = fmt::format("would drain node {} (report only: drain is off): {}", node, out.reason);
    return out;
  }
  try {
    scontrol({"update", "NodeName=" + node, "State=DRAIN", "Reason=" + out.reason});
  } catch (const std::exception& e) {
    out.message = fmt::format("drain of node {} failed: {}", node, e.what());
    return out;
  }
  out.action = DrainAction::Drained;
  out.message = fmt::format("drained node {} (was {}): {}", node, self->state, out.reason);
  // Slurm has no compare-and-set: agents deciding at the same moment all saw room for one more drain. Read the
  // result back and undo this drain when it is one too many (the verdict stays, and the prolog's agent-verdict
  // still guards the node's next job). A failed read keeps the drain: one node too many is the safer error.
  try {
    if (limits.settle_seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(limits.settle_seconds));
    if (!drain_within_limits(node, show_nodes(scontrol), limits, now)) {
      scontrol({"update", "NodeName=" + node, "State=RESUME"});
      out.action = DrainAction::OverBudget;
      out.message = fmt::format(
          "drained node {}, then resumed it: drains by other nodes at the same moment took the "
          "limit ({} an hour, {:g} % of a partition)",
          node, limits.max_per_hour, limits.max_partition_fraction * 100);
    }
  } catch (const std::exception& e) {
    out.message += fmt::format(" (the limits could not be checked again: {})", e.what());
  }
  return out;
}

bool resume_detector_drain(const ScontrolRunner& scontrol, const std::string& node, std::string& why) {
  NodeState st = show_node(scontrol, node);
  if (!st.drain) {
    why = fmt::format("node {} is not drained (state {})", node, st.state);
    return false;
  }
  if (!needs_confirmation(st.reason)) {
    why = fmt::format("node {} is drained with a reason the detector did not set ('{}'): never resumed by gcm", node,
                      st.reason);
    return false;
  }
  if (st.busy) {
    why = fmt::format("node {} still runs a job (state {})", node, st.state);
    return false;
  }
  // Slurm has no compare-and-set on a reason: an operator's new reason between the read above and this update is
  // a window of one RPC, which the confirmation check (seconds to minutes) precedes, not follows.
  scontrol({"update", "NodeName=" + node, "State=RESUME"});
  why = fmt::format("resumed node {} (was drained by the detector: '{}')", node, st.reason);
  return true;
}

}  // namespace gcm::suite
