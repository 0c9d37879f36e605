// The node's XIDs, from both places they are reported: the kernel log (KmsgFollower: a PCI bus id) and NVML
// events (NvmlEventWatcher: a GPU index). One XID reported by both counts once. Per (gpu, uuid, xid) it keeps a
// count, the last time, and whether the XID is still "active" by the catalogue's immediate action:
//
//   XidClearing::GpuReset  RESET_GPU and the WORKFLOW_* actions (row remap after a DBE, NVLink errors): active
//                          until the agent says the GPU was reset (gpu_reset: the GPU came back, its UUID
//                          re-appeared, its recovery action went to none).
//   XidClearing::Reboot    RESTART_BM, RESTART_VM, CONTACT_SUPPORT, CHECK_MECHANICALS: active for the rest of this
//                          boot. State lives in the process only; a restarted agent finds them again because the
//                          follower rereads the kernel log since boot.
//   XidClearing::Window    RESTART_APP, IGNORE, an unknown or empty action and the rest: active until
//                          active_window_s (default 1 h) passes without a repeat, or a reset of the GPU.
//
// Metrics (records(now), the Prometheus names are the contract):
//   gcm_gpu_xid_errors_total{gpu,uuid,xid}            counter: XIDs since the agent started (never decreases)
//   gcm_gpu_xid_last_timestamp_seconds{gpu,uuid,xid}  gauge: Unix time of the last one
//   gcm_gpu_xid_active{gpu,uuid,xid,action}           gauge: 1 while active, 0 once cleared (kept, not dropped,
//                                                     so an alert on == 1 resolves and `changes()` sees the clear)
// A kernel-log XID whose bus id the agent has not mapped (set_gpus) is kept under gpu -1, uuid "unknown".
// Each counted XID also becomes a LOG record (take_log_records) with the catalogue's causes, description and
// actions. Thread-safe: events arrive from two threads, the agent reads from a third.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "agent/xid_records.h"
#include "core/record.h"
#include "detector/gpu_window.h"
#include "health/xid_catalogue.h"
#include "health/xid_line.h"

namespace gcm::agent {

enum class XidSource { Kmsg, Nvml };
const char* to_string(XidSource s);

enum class XidClearing { GpuReset, Reboot, Window };
const char* to_string(XidClearing c);
// The clearing rule of a catalogue immediate action ("RESET_GPU" -> GpuReset, ...); see the table above.
XidClearing clearing_rule(std::string_view immediate_action);

// "PCI:0000:3b:00", "0000:3b:00.0", NVML's "00000000:3B:00.0" -> "0000:3b:00": domain of 4 hex digits, lower
// case, without the function (the kernel's Xid line has none). Text that is no bus id comes back lower-cased.
std::string normalize_pci_bus_id(std::string_view bus_id);

struct GpuIdentity {
  int index = -1;
  std::string uuid;
  std::string pci_bus_id;  // any of the forms above
};

struct XidTrackerOptions {
  double dedup_window_s = 5;                        // the same (gpu, xid) from the other source within this counts once
  double active_window_s = 3600;                    // XidClearing::Window: active this long after the last occurrence
  size_t max_events = 4096;                         // events_since keeps this many of the latest events
  const health::XidCatalogue* catalogue = nullptr;  // null: the built-in one; must outlive the tracker
};

// One counted (not duplicate) XID.
struct XidEvent {
  uint64_t seq = 0;  // 1, 2, ...: for events_since
  int gpu = -1;
  std::string uuid;        // "unknown" when not known
  std::string pci_bus_id;  // normalised; "" when not known
  int xid = 0;
  double unix_s = 0;
  XidSource source = XidSource::Kmsg;
  std::string action;  // the catalogue's immediate action, "UNKNOWN" when it has none
  bool critical = false;
};

class XidTracker {
 public:
  explicit XidTracker(XidTrackerOptions options = {});

  // The GPUs as NVML lists them; the agent calls it when it learns them (and again when they change). Events
  // already counted keep the gpu they were counted under.
  void set_gpus(const std::vector<GpuIdentity>& gpus);

  // An XID from the kernel log ("NVRM: Xid (PCI:0000:3b:00): 79, ..."); `detail` is the line's text after the
  // code. Returns true when counted, false for a duplicate of an NVML event.
  bool add_kmsg(std::string_view pci_bus_id, int xid, double unix_s, std::string_view detail = {});
  // The same for what KmsgFollower delivers; false also for an NVSwitch SXid or an XID line without a number
  // (neither is a GPU XID). `unix_s`: kmsg_unix_time(record.ts_usec).
  bool add_kmsg(const health::XidLine& x, double unix_s);
  // An XID from NVML's event API. Returns true when counted, false for a duplicate of a kernel-log report.
  bool add_nvml(int gpu, int xid, double unix_s);

  // The GPU was reset: clears its GpuReset and Window XIDs that happened before `unix_s`.
  void gpu_reset(int gpu, double unix_s);

  bool is_active(int gpu, int xid, double now) const;
  // The GPU's active XIDs, by code: for the agent's state file and the detector's window.
  std::vector<detector::WindowXid> active_for_gpu(int gpu, double now) const;
  // Counted events after `seq` (0: all kept), oldest first; the agent remembers the last seq it saw.
  std::vector<XidEvent> events_since(uint64_t seq) const;

  // METRIC records of the current state (schemas GpuXidErrors and GpuXidActive).
  std::vector<Record> records(double now) const;
  // The LOG records (schema GpuXidEvent) of events counted since the last call.
  std::vector<Record> take_log_records();

 private:
  struct Key {
    int gpu;
    std::string uuid;
    int xid;
    auto tie() const { return std::tie(gpu, uuid, xid); }
    bool operator<(const Key& o) const { return tie() < o.tie(); }
  };
  struct State {
    uint64_t count = 0;
    double last_unix = 0;
    std::string action;
    XidClearing clearing = XidClearing::Window;
    bool critical = false;
  };
  struct Recent {  // an event kept for de-duplication
    Key key;
    double unix_s;
    XidSource source;
    bool matched;  // already paired with one of the other source
  };
  bool add(XidSource source, int gpu, std::string uuid, std::string bus, int xid, double unix_s,
           std::string_view detail);
  bool active(const Key& k, const State& s, double now) const;
  const health::XidCatalogue& catalogue() const;

  XidTrackerOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, GpuIdentity> by_bus_;  // normalised bus id -> GPU
  std::map<int, GpuIdentity> by_index_;
  std::map<Key, State> states_;
  std::map<int, double> reset_at_;  // gpu -> Unix time of its last reset
  std::deque<Recent> recent_;       // within dedup_window_s of the newest event
  std::deque<XidEvent> events_;
  uint64_t next_seq_ = 1;
  std::vector<Record> pending_logs_;
};

}  // namespace gcm::agent
