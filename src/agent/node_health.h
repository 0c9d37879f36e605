// The node's own problems, those that are not one GPU's (detector::NodeReason): a fatal NVSwitch SXid, an
// uncorrected machine check, a PCIe AER error on an address that is none of the node's GPUs, an InfiniBand port that
// went down, a Fabric Manager that is not running on an NVSwitch system. Each has a state on the GPUs' scale
// (gcm_node_health_state{reason}), the state file's `node` entries, `gcm agent status` and the prolog's
// `agent-verdict` read them.
//
// States follow the kernel-event catalogue (health/kernel_event.h): a critical event the hardware could not recover
// from (fatal SXid, uncorrected or fatal machine check, fatal AER) is failed; a critical one it could (non-fatal AER,
// a port down) is degraded; the catalogue's warnings (corrected errors, non-fatal SXids) are counted, not reasons.
// Clearing: a failed reason holds until the node reboots (the kernel log is reread since boot, so a restarted agent
// finds it again); a non-fatal AER clears `hold_s` after its last error; a port down clears when the same port logs
// its link up; the Fabric Manager reason clears when it runs again.
//
// Thread-safe: the kernel-log follower adds events from its thread, the agent reads from its own.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_state.h"
#include "agent/gpu_address_map.h"
#include "core/record.h"
#include "detector/gpu_window.h"
#include "detector/reasons.h"
#include "health/kernel_event.h"

namespace gcm::agent {

extern const LazySchema kNodeHealthState;  // gcm_node_health_state{reason}
extern const LazySchema kNodeHealthEvent;  // LOG: a node reason began, changed or cleared

// One NodeHealthEvent (from or to Health::Ok where the reason began or cleared).
Record node_health_event(const std::string& hostname, int64_t time_s, const std::string& reason, Health from,
                         Health to, const std::string& evidence);

// A PCIe AER error, for the agent to route: to the GPU its address names, else to the node.
struct AerEvent {
  std::string device;  // the PCI address the line names
  bool fatal = false;
  double unix_s = 0;   // the last of them
  int count = 1;       // errors of this device and kind since the last take_aer()
};

class NodeHealth {
 public:
  explicit NodeHealth(double hold_s = 3600) : hold_s_(hold_s) {}

  // Any kernel event: node reasons are raised or cleared; AER errors are queued for take_aer().
  void add_kernel_event(const health::KernelEvent& e, double unix_s);
  // The AER errors since the last call, one entry per device and kind (an AER storm logs thousands a second, so
  // the queue holds at most kMaxAerDevices of them; the rest are counted under the device "other").
  std::vector<AerEvent> take_aer();
  // An AER error that names none of the node's GPUs.
  void add_node_aer(const AerEvent& e);
  // The Fabric Manager check's result: `problem` "" when it runs (or the node has no NVSwitch).
  void set_fabric_manager(const std::string& problem, double unix_s);

  // Drops what has cleared by `now_s`; returns the active reasons in vocabulary order.
  std::vector<NodeStateEntry> active(double now_s);
  // One record per reason of the vocabulary (0 when it does not hold), so an alert on it resolves.
  static void append_metrics(const std::vector<NodeStateEntry>& active, std::vector<Record>& out);

 private:
  struct Held {
    Health health = Health::Ok;
    std::string evidence;
    double since_s = 0, last_s = 0;
    bool until_reboot = false;  // held until the node reboots
    bool timed = false;         // clears hold_s after last_s; neither: cleared by its own event (a link up, ...)
  };
  void raise(detector::NodeReason r, Health h, std::string evidence, double t, bool until_reboot, bool timed);

  double hold_s_;
  std::mutex mu_;
  std::map<detector::NodeReason, Held> held_;
  std::map<std::string, std::string> ports_down_;  // InfiniBand port -> the line that said it went down
  static constexpr size_t kMaxAerDevices = 256;
  std::map<std::pair<std::string, bool>, AerEvent> aer_;
};

// The AER errors since the last window, routed: an error on a GPU's address is counted in that GPU's window (the
// detector's pcie_aer reason), any other address is the node's. Returns one line per GPU's error for the log.
std::vector<std::string> route_aer(NodeHealth& node, const GpuAddressMap& addresses,
                                   std::vector<detector::GpuWindow>& windows);

}  // namespace gcm::agent
