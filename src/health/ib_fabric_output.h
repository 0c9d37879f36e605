// What the InfiniBand fabric checks of GCM's PR #143 read, judged with its rules. Pure functions of the text, so
// they are unit-tested on fixtures and fuzzed (tests/fuzz/ib_fabric_output_fuzz.cc):
//   check-ib-port-errors  ibdiagnet --pc's ibdiagnet2.pm (port blocks "Port=... Port Name=...", counters
//                         "name=0x<hex>") and ibdiagnet2.ibnetdiscover (switch GUID -> name)
//   check-mlxlink         `mlxlink -d <dev> -m`: module and data-path states, per-lane fault flags, DDM ranges
//   check-mlxcables       `mlxcables -d <dev> --DDM`: an ALARM or WARNING word anywhere
//   check-sm-status       `sminfo`: "... state 3 SMINFO_MASTER"
//   check-ufm-health      UFM's opensm-unhealthy-ports.dump: one CSV line per unhealthy port
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "health/exit_code.h"

namespace gcm::health {

struct FabricVerdict {
  ExitCode code = ExitCode::OK;
  std::string msg;
};

// ---- ibdiagnet ----
// GCM's counters (the "_extended" suffix is dropped in the report).
const std::vector<std::string>& ibdiagnet_error_counters();
// Counters above `threshold`, the largest first: "<n> port error(s) detected:\n<switch>/<port>: <counter>=<n>".
// Empty PM text or no port block is WARNING (ibdiagnet did not run or wrote nothing).
FabricVerdict evaluate_ibdiagnet_pm(std::string_view pm, std::string_view ibnetdiscover, int64_t threshold);

// ---- mlxlink ----
struct MlxlinkRules {
  std::vector<std::string> critical_flags = {"Module FW Fault", "DataPath FW Fault", "Tx Fault", "Rx LOS", "Tx LOS"};
  std::vector<std::string> warn_flags = {"Rx CDR LOL", "Tx CDR LOL", "Tx Adaptive EQ Fault"};
  bool check_ddm_ranges = true;
};
// One HCA's module info: its issue lines ("<dev>: Rx LOS=[0, 0, 1, 0]") go to `issues`; returns the HCA's level.
// rc: mlxlink's exit status (non-zero is WARNING "mlxlink failed").
ExitCode evaluate_mlxlink_module(const std::string& device, std::string_view output, int rc, const MlxlinkRules& rules,
                                 std::vector<std::string>& issues);

// ---- mlxcables ----
// One cable: "<dev>: healthy", "<dev>: DDM ALARM, WARNING detected" (WARNING), "<dev>: mlxcables failed (rc=N)".
FabricVerdict evaluate_mlxcables_ddm(const std::string& device, std::string_view output, int rc);

// ---- sminfo ----
FabricVerdict evaluate_sminfo(std::string_view output, int rc);

// ---- UFM ----
// Non-comment lines of the dump are unhealthy ports: CRITICAL, the first 20 shown.
FabricVerdict evaluate_ufm_unhealthy_ports(std::string_view dump);

}  // namespace gcm::health
