// Whether an NVSwitch system's Fabric Manager runs. Without it the GPUs of an HGX board have no NVLink fabric (CUDA
// jobs fail to start, or run without their peer links), and nothing else on the node says so: one site ran 20 days
// that way. A node without NVSwitches (no nvidia-nvswitch devices under --path.sysfs or --path.procfs) needs none.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "agent/node_health.h"
#include "core/host_roots.h"

namespace gcm::agent {

// True when the driver lists an NVSwitch: <sysfs>/bus/pci/drivers/nvidia-nvswitch/<address> or an entry of
// <procfs>/driver/nvidia-nvswitch/devices.
bool has_nvswitch(const HostRoots& roots);

struct FabricManagerStatus {
  bool known = false;   // false: systemctl could not be asked (missing, timed out); `problem` says why
  std::string problem;  // "" when it runs; else one sentence for the node's fabric_manager reason or the log
};

// `systemctl is-active nvidia-fabricmanager.service` (systemctl from PATH, under `timeout`).
FabricManagerStatus fabric_manager_status(std::chrono::milliseconds timeout);

// The agent's check, every window: on an NVSwitch system the unit's answer sets or clears the node's fabric_manager
// reason; a node without NVSwitches clears it. When systemctl cannot be asked the last answer stands: no answer is
// not a stopped service. Returns that problem the first time it is seen, for the log (nullopt otherwise).
class FabricManagerWatch {
 public:
  std::optional<std::string> check(const HostRoots& roots, std::chrono::milliseconds timeout, NodeHealth& node,
                                   double now_s);

 private:
  std::string unknown_;  // why systemctl could not be asked, as last returned
};

}  // namespace gcm::agent
