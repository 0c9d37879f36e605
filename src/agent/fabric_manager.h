// Whether an NVSwitch system's Fabric Manager runs. Without it the GPUs of an HGX board have no NVLink fabric (CUDA
// jobs fail to start, or run without their peer links), and nothing else on the node says so: one site ran 20 days
// that way. A node without NVSwitches (no nvidia-nvswitch devices under --path.sysfs or --path.procfs) needs none.
#pragma once

#include <chrono>
#include <string>

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

}  // namespace gcm::agent
