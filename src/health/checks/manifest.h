// The node manifest (/etc/manifest.json) that check-pci, check-ib check-iblink, check-ethlink and check-blockdev
// compare the host against: PCIe devices with their expected links, Ethernet interfaces, the InfiniBand fabric's
// rate/firmware/bindings, and NVMe disks. Values are coerced as the reference's models did ("16" and 16 are both a
// width, "true" and true both a flag); anything else is an error naming the file and the key.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gcm::health {

struct ManifestError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct PciEntry {
  std::string id;    // "0000:4b:00.0"
  std::string type;  // pci, gpu, ib, nvme, net, ...
  std::string dev;   // "/sys/class/net/ib2", "/dev/nvme1", "nvswitch_c4"
  std::string zone, slot;
  std::vector<std::string> link_speed;  // accepted current_link_speed values
  std::optional<long long> link_width;
  bool topology_critical = false;
};

struct EthEntry {
  std::string name, netdev;
  bool phys = false;
  std::vector<std::string> flags;
  std::optional<long long> speed;  // Mbps
  std::optional<long long> mtu;
};

struct IbInterface {
  std::string mlx, desc;
};

struct IbSection {
  std::string link_rate;
  std::vector<std::string> firmware_versions;
  std::map<std::string, IbInterface> interfaces;  // netdev -> expected mlx device and node description
};

struct DiskEntry {
  std::string slot, blockdev;
  std::optional<long long> size;  // bytes
};

struct Manifest {
  std::vector<PciEntry> pci;                 // in the file's order
  std::optional<std::vector<EthEntry>> eth;  // absent: no "eth" key
  std::optional<IbSection> ib;
  std::vector<DiskEntry> disks;
};

// Throws ManifestError ("<source>: pci.0000:4b:00.0.link_width: expected an integer, got ...").
Manifest parse_manifest(std::string_view text, const std::string& source);
Manifest load_manifest(const std::string& path);

}  // namespace gcm::health
