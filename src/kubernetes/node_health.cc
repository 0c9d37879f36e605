#include "kubernetes/node_health.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <tuple>

#include <fmt/format.h>

namespace gcm::kube {

namespace {

const Access kPatchNodeStatus{"patch", "nodes/status", "", ""};
const Access kPatchNode{"patch", "nodes", "", ""};

const NodeCondition* gpu_condition(const Node& n) {
  for (const auto& c : n.conditions)
    if (c.type == kGpuHealthyCondition) return &c;
  return nullptr;
}

bool has_gcm_taint(const nlohmann::json& taints) {
  if (!taints.is_array()) return false;
  for (const auto& t : taints)
    if (t.is_object() && t.value("key", "") == kGpuUnhealthyTaint) return true;
  return false;
}

std::string clip(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max - 3;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // not inside a UTF-8 character
  return s.substr(0, n) + "...";
}

void patch_condition(ApiClient& api, const std::string& node, const std::string& status, const std::string& reason,
                     const std::string& message, int64_t now) {
  std::string t = format_rfc3339(now);
  nlohmann::json c = {{"type", kGpuHealthyCondition}, {"status", status},       {"reason", reason},
                      {"message", message},           {"lastHeartbeatTime", t}, {"lastTransitionTime", t}};
  // A strategic merge patch merges status.conditions by type: the kubelet's own conditions are untouched.
  nlohmann::json body = {{"status", {{"conditions", nlohmann::json::array({c})}}}};
  api.patch("/api/v1/nodes/" + url_escape(node) + "/status", body.dump(), "application/strategic-merge-patch+json",
            kPatchNodeStatus);
}

// A merge patch of the node's spec and annotations computed from the node as read, sent with its resourceVersion:
// spec.taints is replaced whole by a merge patch, so a taint another controller added meanwhile must not be lost
// (409 Conflict: read again and recompute, a few times).
template <typename Change>
void patch_node_spec(ApiClient& api, const std::string& name, Change change) {
  for (int attempt = 0;; ++attempt) {
    Node n = get_node(api, name, {kCordonedByGcmAnnotation});
    nlohmann::json patch = change(n);
    if (patch.is_null()) return;
    patch["metadata"]["resourceVersion"] = n.resource_version;
    try {
      api.patch("/api/v1/nodes/" + url_escape(name), patch.dump(), "application/merge-patch+json", kPatchNode);
      return;
    } catch (const ApiError& e) {
      if (e.status != 409 || attempt >= 3) throw;
    }
  }
}

// Lifts gcm's cordon (only where the annotation says gcm set it) and removes gcm's taint.
void lift_gcm_spec(ApiClient& api, const std::string& node) {
  patch_node_spec(api, node, [&](const Node& cur) -> nlohmann::json {
    nlohmann::json p = nlohmann::json::object();
    if (cur.annotations.count(kCordonedByGcmAnnotation)) {
      p["spec"]["unschedulable"] = nullptr;  // merge patch: remove the field
      p["metadata"]["annotations"][kCordonedByGcmAnnotation] = nullptr;
    }
    if (has_gcm_taint(cur.taints)) {
      nlohmann::json keep = nlohmann::json::array();
      for (const auto& t : cur.taints)
        if (!(t.is_object() && t.value("key", "") == kGpuUnhealthyTaint)) keep.push_back(t);
      p["spec"]["taints"] = keep;
    }
    return p.empty() ? nlohmann::json() : p;
  });
}

// Marks that several agents sent at the same moment can each have fitted the limits. After its own mark an agent
// reads the nodes again and, in the order every agent sees (the condition's lastTransitionTime, then the node's
// name), keeps its mark only when it is within both limits; else it takes it back (the condition Unknown, its
// cordon and taint lifted), as a drain over the limits is resumed.
std::string over_limits_after_settling(const std::string& node, const std::vector<Node>& nodes,
                                       const suite::DrainLimits& limits, int64_t now) {
  std::vector<std::tuple<int64_t, std::string>> marked;
  for (const auto& n : nodes)
    if (node_marked(n))
      marked.emplace_back(parse_rfc3339(gpu_condition(n)->last_transition_time).value_or(now), n.name);
  std::sort(marked.begin(), marked.end());
  int recent_before = 0, before = 0;
  for (const auto& [t, name] : marked) {
    if (name == node) break;
    ++before;
    if (now - t < 3600) ++recent_before;
  }
  if (recent_before >= limits.max_per_hour)
    return fmt::format("{} node(s) were marked in the last hour before it (limit {})", recent_before,
                       limits.max_per_hour);
  int cap = suite::partition_cap(limits.max_partition_fraction, static_cast<int64_t>(nodes.size()));
  if (before + 1 > cap)
    return fmt::format("{} of the cluster's {} nodes were marked before it (limit {} node(s))", before, nodes.size(),
                       cap);
  return "";
}

}  // namespace

const char* to_string(NodeMarkAction a) {
  switch (a) {
    case NodeMarkAction::Marked:
      return "marked";
    case NodeMarkAction::WouldMark:
      return "would_mark";
    case NodeMarkAction::AlreadyMarked:
      return "already_marked";
    case NodeMarkAction::OverBudget:
      return "over_budget";
    case NodeMarkAction::Failed:
      return "failed";
    case NodeMarkAction::Cleared:
      return "cleared";
    case NodeMarkAction::NotMarked:
      return "not_marked";
  }
  return "failed";
}

bool node_marked(const Node& n) {
  const NodeCondition* c = gpu_condition(n);
  return c && c->status == "False";
}

suite::DrainBudget judge_mark_budget(const std::string& node, const std::vector<Node>& nodes,
                                     const suite::DrainLimits& limits, int64_t now) {
  int last_hour = 0, marked = 0;
  for (const auto& n : nodes) {
    if (!node_marked(n) || n.name == node) continue;
    ++marked;
    // A mark without a time counts as recent: the limit errs on the side of marking less.
    auto t = parse_rfc3339(gpu_condition(n)->last_transition_time);
    if (!t || now - *t < 3600) ++last_hour;
  }
  if (last_hour >= limits.max_per_hour)
    return {false, fmt::format("{} node(s) marked {}=False in the last hour across the cluster (limit {})", last_hour,
                               kGpuHealthyCondition, limits.max_per_hour)};
  int cap = suite::partition_cap(limits.max_partition_fraction, static_cast<int64_t>(nodes.size()));
  if (marked + 1 > cap)
    return {false, fmt::format("{} of the cluster's {} nodes are marked {}=False already (limit {:g} % = {} node(s))",
                               marked, nodes.size(), kGpuHealthyCondition, limits.max_partition_fraction * 100, cap)};
  return {true, ""};
}

NodeMarkOutcome mark_node_unhealthy(ApiClient& api, const NodeHealthOptions& o, const std::string& evidence,
                                    bool report_only, int64_t now) {
  NodeMarkOutcome out;
  try {
    std::vector<Node> nodes = list_nodes(api);
    const Node* self = nullptr;
    for (const auto& n : nodes)
      if (n.name == o.node) self = &n;
    if (!self) {
      out.message = fmt::format("node {} is not in the API server's node list", o.node);
      return out;
    }
    if (node_marked(*self)) {
      out.action = NodeMarkAction::AlreadyMarked;
      out.message = fmt::format("node {} is marked {}=False already", o.node, kGpuHealthyCondition);
      return out;
    }
    suite::DrainBudget budget = judge_mark_budget(o.node, nodes, o.limits, now);
    if (!budget.allowed) {
      out.action = NodeMarkAction::OverBudget;
      out.message = fmt::format("not marking node {}: {}", o.node, budget.why);
      return out;
    }
    std::string message = clip("gcm: detector: " + evidence, kConditionMessageMax);
    std::string extra = std::string(o.cordon ? ", cordon" : "") +
                        (o.taint ? fmt::format(", taint {}:NoSchedule", kGpuUnhealthyTaint) : "");
    if (report_only) {
      out.action = NodeMarkAction::WouldMark;
      out.message =
          fmt::format("would mark node {} {}=False{} ({}): report only", o.node, kGpuHealthyCondition, extra, message);
      return out;
    }
    patch_condition(api, o.node, "False", "GpuUnhealthy", message, now);
    if (o.cordon || o.taint)
      patch_node_spec(api, o.node, [&](const Node& n) -> nlohmann::json {
        nlohmann::json p = nlohmann::json::object();
        if (o.cordon && !n.unschedulable) {
          // Only a cordon gcm set is gcm's to lift.
          p["spec"]["unschedulable"] = true;
          p["metadata"]["annotations"][kCordonedByGcmAnnotation] = "true";
        }
        if (o.taint && !has_gcm_taint(n.taints)) {
          nlohmann::json taints = n.taints.is_array() ? n.taints : nlohmann::json::array();
          taints.push_back({{"key", kGpuUnhealthyTaint},
                            {"value", "true"},
                            {"effect", "NoSchedule"},
                            {"timeAdded", format_rfc3339(now)}});
          p["spec"]["taints"] = taints;
        }
        return p.empty() ? nlohmann::json() : p;
      });
    if (o.limits.settle_seconds > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(o.limits.settle_seconds));
      std::string over = over_limits_after_settling(o.node, list_nodes(api), o.limits, now);
      if (!over.empty()) {
        patch_condition(api, o.node, "Unknown", "GcmMarkLimitReached",
                        clip("gcm: not marked, " + over + ": " + message, kConditionMessageMax), now);
        lift_gcm_spec(api, o.node);
        out.action = NodeMarkAction::OverBudget;
        out.message = fmt::format("took back the mark of node {}: marks sent at the same moment by other agents: {}",
                                  o.node, over);
        return out;
      }
    }
    out.action = NodeMarkAction::Marked;
    out.message = fmt::format("marked node {} {}=False{}: {}", o.node, kGpuHealthyCondition, extra, message);
  } catch (const std::exception& e) {
    out.action = NodeMarkAction::Failed;
    out.message = fmt::format("cannot mark node {}: {}", o.node, e.what());
  }
  return out;
}

NodeMarkOutcome clear_node_mark(ApiClient& api, const NodeHealthOptions& o, int64_t now) {
  NodeMarkOutcome out;
  try {
    Node n = get_node(api, o.node, {kCordonedByGcmAnnotation});
    bool ours_cordon = n.annotations.count(kCordonedByGcmAnnotation) > 0;
    if (!node_marked(n) && !ours_cordon && !has_gcm_taint(n.taints)) {
      out.action = NodeMarkAction::NotMarked;
      out.message = fmt::format("node {} carries no mark of gcm's", o.node);
      return out;
    }
    if (node_marked(n)) patch_condition(api, o.node, "True", "GpuHealthy", "gcm: the confirmation checks passed", now);
    lift_gcm_spec(api, o.node);
    out.action = NodeMarkAction::Cleared;
    out.message = fmt::format("cleared gcm's mark of node {} ({}=True{}{})", o.node, kGpuHealthyCondition,
                              ours_cordon ? ", uncordoned" : "", has_gcm_taint(n.taints) ? ", taint removed" : "");
  } catch (const std::exception& e) {
    out.action = NodeMarkAction::Failed;
    out.message = fmt::format("cannot clear node {}: {}", o.node, e.what());
  }
  return out;
}

}  // namespace gcm::kube
