#include "agent/amd_events.h"

#include <algorithm>

#include <fmt/format.h>

#include "gpu/amdsmi_api.h"

namespace gcm::agent {

namespace {

using FT = FieldType;
using FR = FieldRole;

Schema make_amd_events() {
  return make_schema(
      "GpuAmdEvents", "AMD GPU events (amdsmi event notifications) per GPU and type since the agent started.", "gpu",
      DataType::Metric,
      {{"gpu", FT::Int, FR::Identity, "", "GPU index"},
       {"uuid", FT::String, FR::Identity, "", "GPU UUID (\"unknown\" when not known)"},
       {"event", FT::String, FR::Identity, "", "RING_HANG, VM_FAULT, GPU_PRE_RESET, GPU_POST_RESET, THERMAL_THROTTLE"},
       {"events", FT::Int, FR::Counter, "", "events seen since the agent started", "gpu_amd_events"},
       {"last_timestamp", FT::Double, FR::Gauge, "seconds", "Unix time of the last event",
        "gpu_amd_event_last_timestamp"}});
}

}  // namespace

constinit const LazySchema kGpuAmdEvents{make_amd_events};
static const bool kAmdEventRecordsRegistered = register_schema(&kGpuAmdEvents);

AmdEventKind amd_event_kind(uint32_t type) {
  switch (type) {
    case amdsmi::kEvtRingHang:
      return {"RING_HANG", "RESET_GPU", true};
    case amdsmi::kEvtVmFault:
      return {"VM_FAULT", "RESTART_APP", false};
    case amdsmi::kEvtGpuPreReset:
      return {"GPU_PRE_RESET", "IGNORE", false};
    case amdsmi::kEvtGpuPostReset:
      return {"GPU_POST_RESET", "IGNORE", false};
    case amdsmi::kEvtThermalThrottle:
      return {"THERMAL_THROTTLE", "IGNORE", false};
    default:
      return {fmt::format("EVENT_{}", type), "IGNORE", false};
  }
}

void AmdEventTracker::add(int gpu, uint32_t type, std::string message, double unix_s) {
  std::lock_guard lock(mu_);
  pending_.push_back({gpu, type, std::move(message), unix_s});
}

std::vector<AmdWindowEvent> AmdEventTracker::take_window_events(const std::function<std::string(int gpu)>& uuid_of) {
  std::vector<Pending> taken;
  {
    std::lock_guard lock(mu_);
    taken.swap(pending_);
  }
  std::vector<AmdWindowEvent> out;
  out.reserve(taken.size());
  for (auto& p : taken) {
    AmdEventKind k = amd_event_kind(p.type);
    AmdWindowEvent e;
    e.gpu = p.gpu;
    e.uuid = uuid_of(p.gpu);
    if (e.uuid.empty()) e.uuid = "unknown";
    e.xid.code = static_cast<int>(p.type);
    e.xid.action = k.action;
    e.xid.critical = k.critical;
    e.xid.name = k.name;
    e.message = std::move(p.message);
    e.unix_s = p.unix_s;
    {
      std::lock_guard lock(mu_);
      State& s = states_[Key{e.gpu, e.uuid, k.name}];
      ++s.count;
      s.last_unix = std::max(s.last_unix, e.unix_s);
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<Record> AmdEventTracker::records() const {
  std::lock_guard lock(mu_);
  std::vector<Record> out;
  out.reserve(states_.size());
  for (const auto& [k, s] : states_) {
    Record r(kGpuAmdEvents);
    r.at("gpu") = int64_t{k.gpu};
    r.at("uuid") = k.uuid;
    r.at("event") = k.event;
    r.at("events") = static_cast<int64_t>(s.count);
    r.at("last_timestamp") = s.last_unix;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace gcm::agent
