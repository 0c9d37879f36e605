#include "agent/node_health.h"

#include <string_view>

#include <fmt/format.h>

#include "core/schema.h"

namespace gcm::agent {

namespace {

using detector::NodeReason;
using health::KernelEventKind;

Schema make_node_health_state() {
  using FT = FieldType;
  using FR = FieldRole;
  // prefix "node" + field "health_state" -> gcm_node_health_state: the same contract name the cross-node rules
  // record per job (deploy/prometheus/rules/gcm-peer-node.yml), told apart there by their job_id label and here by
  // the reason label.
  return make_schema(
      "NodeHealthState", "The agent's state of the node for each node-level reason (not one GPU's).", "node",
      DataType::Metric,
      {{"reason", FT::String, FR::Identity, "", "reason from the node vocabulary (docs/reference/detector.md)"},
       {"health_state", FT::Int, FR::Gauge, "", "0 while the reason does not hold, else 2 degraded or 3 failed"}});
}

Schema make_node_health_event() {
  Schema s;
  s.name = "NodeHealthEvent";
  s.description = "A node-level reason of the agent began, changed state or cleared, with the evidence.";
  s.metric_prefix = "node";
  s.data_type = DataType::Log;
  s.fields = {
      {"hostname", FieldType::String, FieldRole::Attribute, "", "host name"},
      {"time", FieldType::Int, FieldRole::Attribute, "", "end of the window, Unix seconds"},
      {"reason", FieldType::String, FieldRole::Attribute, "", "reason from the node vocabulary"},
      {"from_state", FieldType::String, FieldRole::Attribute, "", "the reason's state before (ok: it did not hold)"},
      {"to_state", FieldType::String, FieldRole::Attribute, "", "its state after (ok: cleared)"},
      {"health_state", FieldType::Int, FieldRole::Attribute, "", "state after: 0 ok, 2 degraded, 3 failed"},
      {"evidence", FieldType::String, FieldRole::Attribute, "", "what raised it (empty when cleared)"},
  };
  return s;
}

// What the event is a line of, for the evidence.
std::string describe(const health::KernelEvent& e) {
  std::string_view d = e.detail;
  if (d.size() > 200) d = d.substr(0, 200);
  return fmt::format("{} {}{}{}: {}", to_string(e.info->kind), e.info->cls, e.device.empty() ? "" : " on ", e.device,
                     d);
}

}  // namespace

constinit const LazySchema kNodeHealthState{make_node_health_state};
constinit const LazySchema kNodeHealthEvent{make_node_health_event};
static const bool kNodeHealthRegistered = register_schema(&kNodeHealthState) && register_schema(&kNodeHealthEvent);

Record node_health_event(const std::string& hostname, int64_t time_s, const std::string& reason, Health from,
                         Health to, const std::string& evidence) {
  Record r(kNodeHealthEvent);
  r.at("hostname") = hostname;
  r.at("time") = time_s;
  r.at("reason") = reason;
  r.at("from_state") = to_string(from);
  r.at("to_state") = to_string(to);
  r.at("health_state") = static_cast<int64_t>(to);
  r.at("evidence") = evidence;
  return r;
}

void NodeHealth::raise(NodeReason r, Health h, std::string evidence, double t, bool until_reboot, bool timed) {
  auto [it, fresh] = held_.try_emplace(r);
  Held& held = it->second;
  if (fresh) held.since_s = t;
  // The first event of the worst severity says when and how it started; repeats only extend it.
  if (fresh || h > held.health) {
    held.health = h;
    held.evidence = std::move(evidence);
  }
  held.last_s = std::max(held.last_s, t);
  held.until_reboot = held.until_reboot || until_reboot;
  held.timed = !held.until_reboot && timed;
}

void NodeHealth::add_kernel_event(const health::KernelEvent& e, double unix_s) {
  if (!e.info) return;
  std::string_view cls = e.info->cls;
  std::lock_guard<std::mutex> g(mu_);
  switch (e.info->kind) {
    case KernelEventKind::SXid:
      if (cls == "fatal") raise(NodeReason::SxidFatal, Health::Failed, describe(e), unix_s, true, false);
      break;
    case KernelEventKind::Mce:
      if (cls == "uncorrected" || cls == "fatal")
        raise(NodeReason::MceUncorrected, Health::Failed, describe(e), unix_s, true, false);
      break;
    case KernelEventKind::PcieAer:
      // Corrected errors are the catalogue's warnings: counted, not a reason. Which GPU an address is, the agent
      // knows: it takes these and gives back the ones that are none of them (add_node_aer).
      if (cls == "fatal" || cls == "non_fatal") {
        bool fatal = cls == "fatal";
        std::pair<std::string, bool> key{e.device, fatal};
        if (!aer_.count(key) && aer_.size() >= kMaxAerDevices) key.first = "other";
        auto [it, fresh] = aer_.try_emplace(key, AerEvent{key.first, fatal, unix_s, 0});
        ++it->second.count;
        it->second.unix_s = std::max(it->second.unix_s, unix_s);
      }
      break;
    case KernelEventKind::LinkDown:
      if (cls != "infiniband") break;
      ports_down_[e.device] = describe(e);
      raise(NodeReason::IbLinkDown, Health::Degraded, describe(e), unix_s, false, false);
      break;
    case KernelEventKind::LinkUp:
      if (cls != "infiniband") break;
      ports_down_.erase(e.device);
      if (ports_down_.empty()) {
        held_.erase(NodeReason::IbLinkDown);
      } else if (auto it = held_.find(NodeReason::IbLinkDown); it != held_.end()) {
        it->second.evidence = ports_down_.begin()->second;  // a port still down
      }
      break;
  }
}

std::vector<AerEvent> NodeHealth::take_aer() {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<AerEvent> out;
  for (auto& [key, e] : aer_) out.push_back(std::move(e));
  aer_.clear();
  return out;
}

void NodeHealth::add_node_aer(const AerEvent& e) {
  std::lock_guard<std::mutex> g(mu_);
  std::string evidence = fmt::format("pcie_aer {} on {} (none of the node's GPUs), {} error(s)",
                                     e.fatal ? "fatal" : "non_fatal", e.device.empty() ? "an unnamed device" : e.device,
                                     e.count);
  raise(NodeReason::PcieAer, e.fatal ? Health::Failed : Health::Degraded, std::move(evidence), e.unix_s, e.fatal,
        !e.fatal);
}

void NodeHealth::set_fabric_manager(const std::string& problem, double unix_s) {
  std::lock_guard<std::mutex> g(mu_);
  if (problem.empty()) {
    held_.erase(NodeReason::FabricManager);
    return;
  }
  raise(NodeReason::FabricManager, Health::Degraded, problem, unix_s, false, false);
}

std::vector<NodeStateEntry> NodeHealth::active(double now_s) {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<NodeStateEntry> out;
  for (auto it = held_.begin(); it != held_.end();) {
    if (it->second.timed && now_s - it->second.last_s > hold_s_) {
      it = held_.erase(it);
      continue;
    }
    out.push_back({detector::node_reason_name(it->first), it->second.health, it->second.evidence,
                   static_cast<int64_t>(it->second.since_s * 1000)});
    ++it;
  }
  return out;
}

void NodeHealth::append_metrics(const std::vector<NodeStateEntry>& active, std::vector<Record>& out) {
  for (int i = 0; i < detector::kNodeReasonCount; ++i) {
    std::string name = detector::node_reason_name(static_cast<NodeReason>(i));
    int64_t v = 0;
    for (const auto& a : active)
      if (a.reason == name) v = static_cast<int64_t>(a.health);
    Record r(kNodeHealthState);
    r[0] = name;
    r[1] = v;
    out.push_back(std::move(r));
  }
}

std::vector<std::string> route_aer(NodeHealth& node, const GpuAddressMap& addresses,
                                   std::vector<detector::GpuWindow>& windows) {
  std::vector<std::string> lines;
  for (const AerEvent& e : node.take_aer()) {
    auto gpu = addresses.index_of(e.device);
    detector::GpuWindow* w = nullptr;
    for (auto& candidate : windows)
      if (gpu && candidate.gpu == *gpu) w = &candidate;
    if (!w) {
      node.add_node_aer(e);
      continue;
    }
    (e.fatal ? w->pcie_aer_fatal : w->pcie_aer_non_fatal) += e.count;
    lines.push_back(
        fmt::format("[GPU {}] {} PCIe AER {} error(s) on {}", w->gpu, e.count, e.fatal ? "fatal" : "non-fatal", e.device));
  }
  return lines;
}

}  // namespace gcm::agent
