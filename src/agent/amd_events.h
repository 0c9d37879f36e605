// What the agent makes of AMD's GPU events (agent/amdsmi_events.h), the analogue of NVIDIA's XIDs: each type's name
// and catalogue action, a count per GPU and type for /metrics, and the events of each window for the detector, which
// judges them by action as it judges XIDs (reason `xid`, the evidence naming the event):
//
//   RING_HANG         RESET_GPU, critical: a GPU engine stopped (the driver resets the GPU): the GPU is failed
//   VM_FAULT          RESTART_APP: a GPU page fault (usually the job's bug, as XID 31): the GPU is degraded
//   GPU_PRE_RESET     IGNORE: counted (the reset's cause comes as its own event)
//   GPU_POST_RESET    IGNORE: counted; the GPU's reset-cleared XIDs are cleared (HardwareEvents)
//   THERMAL_THROTTLE  IGNORE: counted (amdsmi's violation status is the throttle signal the detector judges)
//   any other type    IGNORE, named EVENT_<n>
//
// Metrics (records(), the Prometheus names are the contract):
//   gcm_gpu_amd_events_total{gpu,uuid,event}                  counter: events since the agent started
//   gcm_gpu_amd_event_last_timestamp_seconds{gpu,uuid,event}  gauge: Unix time of the last one
// Thread-safe: events arrive on the watcher's thread, the agent reads on its own.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/record.h"
#include "core/schema.h"
#include "detector/gpu_window.h"

namespace gcm::agent {

extern const LazySchema kGpuAmdEvents;  // METRIC {gpu,uuid,event}: events (counter), last_timestamp (gauge, seconds)

struct AmdEventKind {
  std::string name;    // "RING_HANG"
  std::string action;  // "RESET_GPU", "RESTART_APP", "IGNORE"
  bool critical = false;
};
AmdEventKind amd_event_kind(uint32_t type);

// One event as the window takes it.
struct AmdWindowEvent {
  int gpu = 0;
  std::string uuid;
  detector::WindowXid xid;  // name, action and critical from amd_event_kind; code is the amdsmi type
  std::string message;      // the driver's text
  double unix_s = 0;
};

class AmdEventTracker {
 public:
  // One event of GPU `gpu`, on the watcher's thread.
  void add(int gpu, uint32_t type, std::string message, double unix_s);
  // The events added since the last call, counted under the UUID `uuid_of` gives their GPU ("unknown" for "").
  std::vector<AmdWindowEvent> take_window_events(const std::function<std::string(int gpu)>& uuid_of);
  std::vector<Record> records() const;

 private:
  struct Key {
    int gpu;
    std::string uuid;
    std::string event;
    auto tie() const { return std::tie(gpu, uuid, event); }
    bool operator<(const Key& o) const { return tie() < o.tie(); }
  };
  struct State {
    uint64_t count = 0;
    double last_unix = 0;
  };
  struct Pending {
    int gpu;
    uint32_t type;
    std::string message;
    double unix_s;
  };
  mutable std::mutex mu_;
  std::vector<Pending> pending_;
  std::map<Key, State> states_;
};

}  // namespace gcm::agent
