#include "agent/fabric_manager.h"

#include <filesystem>

#include <fmt/format.h>

#include "core/subprocess.h"

namespace gcm::agent {

namespace {

constexpr const char* kUnit = "nvidia-fabricmanager.service";

bool any_entry(const std::string& dir, bool pci_addresses_only) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    // The driver's directory also holds bind, unbind, module, ...: its devices are the names with a ':'.
    if (!pci_addresses_only || name.find(':') != std::string::npos) return true;
  }
  return false;
}

std::string first_line(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line.substr(0, 200);
}

}  // namespace

bool has_nvswitch(const HostRoots& roots) {
  return any_entry(roots.sys("bus/pci/drivers/nvidia-nvswitch"), true) ||
         any_entry(roots.proc("driver/nvidia-nvswitch/devices"), false);
}

FabricManagerStatus fabric_manager_status(std::chrono::milliseconds timeout) {
  CommandSpec spec;
  spec.argv = {"systemctl", "is-active", kUnit};
  spec.timeout = timeout;
  spec.max_stdout = 4096;
  FabricManagerStatus st;
  try {
    CommandResult r = run_command(spec);
    if (r.timed_out) {
      st.problem = fmt::format("systemctl is-active {} did not answer within {} ms", kUnit, timeout.count());
      return st;
    }
    st.known = true;
    std::string state = first_line(r.out);
    // is-active prints the unit's state and exits 0 only for "active"; anything else (inactive, failed,
    // activating, unknown for a unit that is not installed) is a fabric the GPUs do not have.
    if (r.exit_code != 0)
      st.problem = fmt::format("NVSwitch system and {} is {}", kUnit, state.empty() ? "not active" : state);
  } catch (const CommandError& e) {
    st.problem = e.what();
  }
  return st;
}

std::optional<std::string> FabricManagerWatch::check(const HostRoots& roots, std::chrono::milliseconds timeout,
                                                     NodeHealth& node, double now_s) {
  if (!has_nvswitch(roots)) {
    node.set_fabric_manager("", now_s);
    return std::nullopt;
  }
  FabricManagerStatus st = fabric_manager_status(timeout);
  if (!st.known) {
    bool fresh = st.problem != unknown_;
    unknown_ = st.problem;
    return fresh ? std::optional(st.problem) : std::nullopt;
  }
  unknown_.clear();
  node.set_fabric_manager(st.problem, now_s);
  return std::nullopt;
}

}  // namespace gcm::agent
