#include "agent/gpu_address_map.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

namespace gcm::agent {

namespace {

namespace fs = std::filesystem;

// "0000:3b:00.0": the form of a PCI device's directory name.
bool is_pci_address(const std::string& s) {
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11})
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// A small file of the host, at most `limit` bytes; nullopt when it cannot be opened.
std::optional<std::string> read_driver_file(const fs::path& p, size_t limit = 4096) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

std::string driver_info_trim(std::string_view v) {
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
  return std::string(v);
}

// A UUID as the driver prints it ("GPU-" and hex digits with dashes); anything else is not taken as one.
bool plausible_uuid(const std::string& s) {
  if (s.size() < 5 || s.size() > 64 || s.rfind("GPU-", 0) != 0) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-'; });
}

// The value of "Key:  value" in the driver's information file; "" when absent.
std::string information_field(std::string_view text, std::string_view key) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    size_t colon = line.find(':');
    if (colon != std::string_view::npos && driver_info_trim(line.substr(0, colon)) == key) return driver_info_trim(line.substr(colon + 1));
    pos = end + 1;
  }
  return "";
}

// Entries of a directory; none when it cannot be listed.
std::vector<std::string> driver_dir_entries(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<HostGpu> read_host_gpus(const HostRoots& roots, std::vector<std::string>* problems) {
  std::map<std::string, HostGpu> by_bus;
  fs::path gpus = roots.proc("driver/nvidia/gpus");
  for (const auto& name : driver_dir_entries(gpus)) {
    if (!is_pci_address(name)) continue;
    HostGpu g;
    g.pci_bus_id = normalize_pci_bus_id(name);
    auto text = read_driver_file(gpus / name / "information");
    if (!text) {
      if (problems) problems->push_back(fmt::format("cannot read {}", (gpus / name / "information").string()));
    } else {
      std::string bus = information_field(*text, "Bus Location");
      if (!bus.empty()) g.pci_bus_id = normalize_pci_bus_id(bus);
      std::string uuid = information_field(*text, "GPU UUID");
      if (plausible_uuid(uuid)) g.uuid = uuid;
    }
    by_bus[g.pci_bus_id] = g;
  }
  fs::path bound = roots.sys("bus/pci/drivers/nvidia");
  for (const auto& name : driver_dir_entries(bound)) {
    if (!is_pci_address(name)) continue;  // bind, unbind, new_id, module, ...
    // NVSwitches and other functions the driver may hold are no GPUs: a GPU is a display controller (0x03xxxx).
    if (auto cls = read_driver_file(bound / name / "class", 64); cls && driver_info_trim(*cls).rfind("0x03", 0) != 0) continue;
    std::string bus = normalize_pci_bus_id(name);
    by_bus.try_emplace(bus, HostGpu{bus, ""});
  }
  std::vector<HostGpu> out;
  for (auto& [bus, g] : by_bus) out.push_back(std::move(g));
  return out;
}

void GpuAddressMap::set_host_gpus(std::vector<HostGpu> gpus) {
  host_ = std::move(gpus);
  std::sort(host_.begin(), host_.end(), [](const auto& a, const auto& b) { return a.pci_bus_id < b.pci_bus_id; });
  rebuild();
}

void GpuAddressMap::set_gpu_count(std::optional<unsigned> count) {
  count_ = count;
  rebuild();
}

bool GpuAddressMap::learn(unsigned index, const std::string& uuid, const std::string& pci_bus_id) {
  Known& k = nvml_[index];
  Known before = k;
  if (!uuid.empty()) k.uuid = uuid;
  if (!pci_bus_id.empty()) k.pci_bus_id = normalize_pci_bus_id(pci_bus_id);
  if (k.uuid == before.uuid && k.pci_bus_id == before.pci_bus_id) return false;
  // An address belongs to one GPU: another index that had it (NVML renumbered after a reload) loses it.
  for (auto& [i, other] : nvml_)
    if (i != index && !k.pci_bus_id.empty() && other.pci_bus_id == k.pci_bus_id) other = Known{};
  rebuild();
  return true;
}

void GpuAddressMap::rebuild() {
  merged_.clear();
  std::set<std::string> claimed_bus, claimed_uuid;
  for (const auto& [i, k] : nvml_) {
    if (k.uuid.empty() && k.pci_bus_id.empty()) continue;
    merged_[i] = k;
    if (!k.pci_bus_id.empty()) claimed_bus.insert(k.pci_bus_id);
    if (!k.uuid.empty()) claimed_uuid.insert(k.uuid);
  }
  // What the host says of a GPU NVML identified in part (its UUID but not its address, or the reverse).
  for (auto& [i, k] : merged_)
    for (const auto& h : host_) {
      if (k.pci_bus_id.empty() && !h.uuid.empty() && h.uuid == k.uuid) k.pci_bus_id = h.pci_bus_id;
      if (k.uuid.empty() && !h.pci_bus_id.empty() && h.pci_bus_id == k.pci_bus_id) k.uuid = h.uuid;
    }
  for (const auto& [i, k] : merged_) {
    claimed_bus.insert(k.pci_bus_id);
    if (!k.uuid.empty()) claimed_uuid.insert(k.uuid);
  }
  // The host's other GPUs, in address order, on the indices NVML has not identified, in index order.
  unsigned limit = count_.value_or(static_cast<unsigned>(host_.size() + nvml_.size()));
  unsigned next = 0;
  for (const auto& h : host_) {
    if (claimed_bus.count(h.pci_bus_id) || (!h.uuid.empty() && claimed_uuid.count(h.uuid))) continue;
    while (next < limit && merged_.count(next)) ++next;
    if (next >= limit) break;
    merged_[next++] = Known{h.uuid, h.pci_bus_id};
  }
}

std::vector<GpuIdentity> GpuAddressMap::identities() const {
  std::vector<GpuIdentity> out;
  for (const auto& [i, k] : merged_) out.push_back({static_cast<int>(i), k.uuid, k.pci_bus_id});
  return out;
}

std::string GpuAddressMap::uuid_of(unsigned index) const {
  auto it = merged_.find(index);
  return it == merged_.end() ? "" : it->second.uuid;
}

std::optional<unsigned> GpuAddressMap::index_of(const std::string& pci_bus_id) const {
  std::string bus = normalize_pci_bus_id(pci_bus_id);
  for (const auto& [i, k] : merged_)
    if (!k.pci_bus_id.empty() && k.pci_bus_id == bus) return i;
  return std::nullopt;
}

}  // namespace gcm::agent
