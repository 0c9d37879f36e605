#include "health/killswitches.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace gcm::health {

const std::vector<std::string>& known_killswitch_flags() {
  static const std::vector<std::string> flags = {
      "disable_check_ssh_certs", "disable_cuda_memtest", "disable_check_zombie", "disable_check_dstate",
      "disable_link_flap", "disable_xid_errors", "disable_io_errors", "disable_proc_freq", "disable_freq_governor",
      "disable_check_mem_size", "disable_check_buddyinfo", "disable_ipmi_sel", "disable_hca_count",
      "disable_disk_usage", "disable_disk_size", "disable_mounted_dir", "disable_file_exists", "disable_dir_exists",
      "disable_running_process", "disable_check_ssh", "disable_slurm_state", "disable_slrmctld_count",
      "disable_slurm_cluster_avail", "disable_service_status", "disable_package_version", "disable_nccl_tests",
      "disable_nvidia_smi", "disable_nvidia_smi_gpu_num", "disable_nvidia_smi_clock_freq",
      "disable_nvidia_smi_running_procs", "disable_nvidia_smi_running_procs_and_kill", "disable_nvidia_smi_gpu_temp",
      "disable_nvidia_smi_mem_usage", "disable_nvidia_smi_retired_pages", "disable_nvidia_smi_ecc_uncorrected",
      "disable_nvidia_smi_ecc_corrected", "disable_nvidia_smi_row_remap", "disable_nvidia_smi_row_remap_pending",
      "disable_nvidia_smi_row_remap_failed", "disable_nvidia_smi_vbios_mismatch", "disable_dcgmi_diag",
      "disable_dcgmi_nvlink", "disable_dcgmi_nvlink_error", "disable_dcgmi_nvlink_status", "disable_check_ibstat",
      "disable_check_ib_interfaces", "disable_check_iblink", "disable_pass_status", "disable_user_access_path_check",
      "disable_check_uptime", "disable_check_module", "disable_check_dnf_repos", "disable_check_mountpoint",
      "disable_check_pci", "disable_check_blockdev", "disable_check_ethlink", "disable_check_clocksource",
      "disable_airstore_credential_count", "disable_check_sensors", "disable_agent_verdict",
      "disable_nvidia_smi_persistence_mode",
      // GCM's 2026 additions (gcm-newer.md §5.3).
      "disable_mce_errors", "disable_pcie_aer_errors", "disable_nvidia_smi_clock_policy", "disable_ib_port_counters",
      "disable_check_ib_port_errors", "disable_check_ib_module_health", "disable_check_ib_cable_ddm",
      "disable_check_ib_sm_status", "disable_ib_ufm_health",
      // check-amd-smi: GCM's flags (upstream PR #80), then this build's sub-checks on AMD's memory and links.
      "disable_amd_smi", "disable_amd_smi_gpu_num", "disable_amd_smi_clock_freq", "disable_amd_smi_running_procs",
      "disable_amd_smi_running_procs_and_kill", "disable_amd_smi_gpu_temp", "disable_amd_smi_mem_usage",
      "disable_amd_smi_ecc_uncorrected", "disable_amd_smi_bad_pages", "disable_amd_smi_xgmi",
      // Flags of GCM checks this build does not have (RCCL, MORI, Pantheon): known, so that a features file written
      // for a mixed GCM fleet loads without an "unknown flag" warning for each of them.
      "disable_rccl_tests", "disable_mori_tests", "disable_check_pantheon"};
  return flags;
}

namespace {

// A directory or a file we may not open: GCM refuses both on its command line (click.Path, dir_okay=False and
// readable), so they are the operator's mistake to be told about, not the fallback for a bad push of the file.
void require_readable_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw KillswitchFileError(fmt::format("features config {} is a directory, not a TOML file", path));
  std::ifstream in(path);
  if (!in) throw KillswitchFileError(fmt::format("features config {} cannot be read: {}", path, std::strerror(errno)));
}

}  // namespace

Killswitches Killswitches::load(const std::string& path, std::vector<std::string>* warnings) {
  if (!std::filesystem::exists(path))
    throw KillswitchError(fmt::format("features_config path doesn't exist: {}", path));
  require_readable_file(path);
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    // As the reference: a file that fails to load leaves every check enabled (one bad push of the file must not
    // stop every prolog on the fleet); the caller logs why.
    Killswitches none;
    none.load_failure_ = fmt::format(
        "features config {}:{}:{}: not valid TOML ({}); not loaded, every check stays "
        "enabled",
        path, e.source().begin.line, e.source().begin.column, e.description());
    if (warnings) warnings->push_back(*none.load_failure_);
    return none;
  }
  Killswitches k;
  const toml::table* t = root["HealthChecksFeatures"].as_table();
  if (!t) return k;
  const auto& known = known_killswitch_flags();
  for (const auto& [key, node] : *t) {
    std::string name(key.str());
    auto b = node.value<bool>();
    if (!node.is_boolean() || !b)
      throw KillswitchError(
          fmt::format("features config {}: [HealthChecksFeatures] {} must be true or false", path, name));
    if (std::find(known.begin(), known.end(), name) == known.end() && warnings)
      warnings->push_back(fmt::format("features config {}: unknown flag {}", path, name));
    k.flags_[name] = *b;
  }
  return k;
}

bool Killswitches::disabled(const std::string& flag) const {
  auto it = flags_.find(flag);
  return it != flags_.end() && it->second;
}

}  // namespace gcm::health
