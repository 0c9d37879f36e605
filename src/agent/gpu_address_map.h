// Which GPU of this node a PCI address names: the map the kernel log's XIDs (and AER errors) are attributed by. It
// must not depend on the GPU answering, because the XID that matters most (79, fallen off the bus) comes from a GPU
// whose NVML calls hang or fail from then on, and possibly from the agent's start.
//
// Two sources, each kept as long as the agent runs:
//   - NVML: each GPU's UUID and PCI address from the first sample that read them (the sampler reads them first, so
//     a GPU lost later in that sample still gives them). Authoritative for its index, and kept when the GPU goes
//     silent: a GPU that stopped answering keeps its address and UUID.
//   - the driver's own view under --path.procfs and --path.sysfs, read when the agent starts and when NVML is loaded:
//     /proc/driver/nvidia/gpus/<address>/information (its "GPU UUID" and "Bus Location" lines) and the devices bound
//     to the driver, /sys/bus/pci/drivers/nvidia/<address> (display controllers only, PCI class 0x03xxxx). An
//     address there that no NVML answer claimed is given to an index NVML has not identified, both in ascending
//     order: NVML numbers GPUs in PCI address order, so a GPU silent from the start gets its own index.
// An address no source lists is none of this node's GPUs (gpu -1 in the XID metrics).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/xid_tracker.h"
#include "core/host_roots.h"

namespace gcm::agent {

struct HostGpu {
  std::string pci_bus_id;  // normalize_pci_bus_id's form ("0000:3b:00")
  std::string uuid;        // "" when the driver's information file does not say it
};

// The GPUs the driver lists under the roots, in address order. Unreadable or missing directories are no GPUs (a
// host without the driver, a container without /proc/driver); `problems` gets one line per file that could not be
// read although it exists.
std::vector<HostGpu> read_host_gpus(const HostRoots& roots, std::vector<std::string>* problems = nullptr);

class GpuAddressMap {
 public:
  void set_host_gpus(std::vector<HostGpu> gpus);
  // NVML's device count (nullopt: NVML is not loaded; every host GPU then gets the index of its address order).
  void set_gpu_count(std::optional<unsigned> count);
  // What NVML said of GPU `index`; empty fields leave what is known. True when the map changed.
  bool learn(unsigned index, const std::string& uuid, const std::string& pci_bus_id);

  // Every GPU whose address or UUID is known, by index.
  std::vector<GpuIdentity> identities() const;
  std::string uuid_of(unsigned index) const;  // "" when unknown
  // The index whose address is `pci_bus_id` (any form normalize_pci_bus_id reads); nullopt: none of this node's.
  std::optional<unsigned> index_of(const std::string& pci_bus_id) const;

 private:
  struct Known {
    std::string uuid, pci_bus_id;  // normalised address
  };
  void rebuild();

  std::map<unsigned, Known> nvml_;  // by index
  std::vector<HostGpu> host_;
  std::optional<unsigned> count_;
  std::map<unsigned, Known> merged_;  // nvml_ with the host's unclaimed GPUs on the unidentified indices
};

}  // namespace gcm::agent
