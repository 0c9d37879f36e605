// health_checks check-ib: the InfiniBand fabric checks of GCM's PR #143, judged by health/ib_fabric_output.h:
//   check-ib-port-errors  the counters of `ibdiagnet --pc`'s files (run on a management node after ibdiagnet)
//   check-mlxlink         each HCA's module through `mlxlink -d /dev/mst/<pciconf> -m`
//   check-mlxcables       each cable through `mlxcables -d /dev/mst/<..cable_0> --DDM`
//   check-sm-status       the subnet manager through `sminfo`
//   check-ufm-health      UFM's unhealthy-ports dump (on the UFM node)
// The MST devices and the files are found under --path.rootfs; every tool runs by argv with the check's timeout.
#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "cli/option_binder.h"
#include "health/checks/host_check.h"
#include "health/ib_fabric_output.h"

namespace gcm::health {
namespace {

// The /dev/mst entries matching a shell pattern (GCM's glob), sorted.
std::vector<std::string> mst_devices(const HostRoots& roots, const char* pattern, const char* exclude = nullptr) {
  std::string dir = roots.root("/dev/mst");
  std::vector<std::string> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (::fnmatch(pattern, name.c_str(), FNM_PERIOD) != 0) continue;
    if (exclude && name.find(exclude) != std::string::npos) continue;
    found.push_back(dir + "/" + name);
  }
  std::sort(found.begin(), found.end());
  return found;
}

// A file option's path on the host: an absolute path is read under --path.rootfs, a relative one as given (from the
// working directory, as GCM opens it).
std::string host_path(const HostRoots& roots, const std::string& p) {
  return !p.empty() && p[0] == '/' ? roots.root(p) : p;
}

// Seconds left of the check's --timeout for the next tool (at least 1): several devices share one budget, so a
// node with eight hanging HCAs still ends near its timeout rather than eight times it.
int64_t remaining_s(const CheckRun& r) {
  auto deadline = r.deadline();
  if (!deadline) return r.timeout_s > 0 ? r.timeout_s : 300;
  auto left = std::chrono::duration_cast<std::chrono::seconds>(*deadline - std::chrono::steady_clock::now()).count();
  return std::max<int64_t>(1, left);
}

// ---- check-ib-port-errors ----

struct PortErrorsOpts {
  HostRoots roots;
  std::string pm_file = "/var/tmp/ibdiagnet2/ibdiagnet2.pm";
  std::string discover_file = "/var/tmp/ibdiagnet2/ibdiagnet2.ibnetdiscover";
  int64_t error_threshold = 0;
};

const bool kPortErrors = register_simple_check<PortErrorsOpts>(
    {"check-ib", "check-ib-port-errors"},
    "Fabric-wide port error counters from `ibdiagnet --pc`'s files (run on a management node after ibdiagnet): "
    "CRITICAL for any counter above --error-threshold, listed largest first with the switch's name from the "
    "ibnetdiscover file; WARNING when the PM file is missing, empty or has no port.",
    false, "check ib port errors", "disable_check_ib_port_errors",
    [](OptionBinder& b, PortErrorsOpts& o) {
      b.option("--pm-file", "pm_file", o.pm_file, "Path to ibdiagnet2.pm file.")->capture_default_str();
      b.option("--discover-file", "discover_file", o.discover_file, "Path to ibdiagnet2.ibnetdiscover file.")
          ->capture_default_str();
      b.option("--error-threshold", "error_threshold", o.error_threshold, "Only report errors exceeding this count.")
          ->capture_default_str();
      add_rootfs_option(b, o.roots);
    },
    [](CheckRun& r, const PortErrorsOpts& o) -> CheckOutcome {
      std::string pm_path = host_path(o.roots, o.pm_file);
      std::error_code ec;
      if (!std::filesystem::exists(pm_path, ec)) return {ExitCode::WARN, "PM file not found: " + o.pm_file};
      auto pm = read_file(pm_path);
      if (!pm)
        return {ExitCode::WARN, fmt::format("Error reading PM file: {}: cannot be read or is larger than {} MiB",
                                            o.pm_file, kMaxHostFileBytes >> 20)};
      auto discover = read_file(host_path(o.roots, o.discover_file));
      if (!discover && r.log)
        r.log->warn("Discover file {} not readable, switch names will be hex IDs", o.discover_file);
      auto v = evaluate_ibdiagnet_pm(*pm, discover.value_or(""), o.error_threshold);
      return {v.code, v.msg};
    });

// ---- check-mlxlink ----

struct MlxlinkOpts {
  HostRoots roots;
  MlxlinkRules rules;
};

const bool kMlxlink = register_simple_check<MlxlinkOpts>(
    {"check-ib", "check-mlxlink"},
    "Each HCA's cable module (/dev/mst/mt*pciconf*, `mlxlink -d <dev> -m`): CRITICAL when the module is not in "
    "Ready state, a data path is not DPActivated or a --critical-flags fault is set on a lane; WARNING for a "
    "--warn-flags fault, a DDM value (temperature, voltage, bias, Rx/Tx power) outside its range, or mlxlink "
    "failing; UNKNOWN when there is no MST device (run `mst start`).",
    true, "check ib module health", "disable_check_ib_module_health",
    [](OptionBinder& b, MlxlinkOpts& o) {
      b.option("--critical-flags", "critical_flags", o.rules.critical_flags,
               "mlxlink fault flags that escalate to CRITICAL when nonzero; repeat for several.")
          ->capture_default_str();
      b.option("--warn-flags", "warn_flags", o.rules.warn_flags,
               "mlxlink fault flags that escalate to WARN when nonzero; repeat for several.")
          ->capture_default_str();
      b.flag("--check-ddm-ranges,!--no-check-ddm-ranges", "check_ddm_ranges", o.rules.check_ddm_ranges,
             "Verify Temperature/Voltage/Bias/Power values fall within reported ranges (default: on).");
      add_rootfs_option(b, o.roots);
    },
    [](CheckRun& r, const MlxlinkOpts& o) -> CheckOutcome {
      auto devices = mst_devices(o.roots, "mt*pciconf[0-9]*", "_cable_");
      if (devices.empty()) return {ExitCode::UNKNOWN, "No IB pciconf devices found"};
      ExitCode code = ExitCode::OK;
      std::vector<std::string> issues;
      for (const auto& d : devices) {
        auto t = run_tool({"mlxlink", "-d", d, "-m"}, remaining_s(r));
        if (!t.ok() && r.log) r.log->warn("{}", t.failure());
        code = worse(code, evaluate_mlxlink_module(d, t.out, t.rc, o.rules, issues));
      }
      if (issues.empty()) return {code, fmt::format("All {} HCA(s) healthy", devices.size())};
      std::string msg = fmt::format("{} issue(s) across {} HCA(s):", issues.size(), devices.size());
      for (const auto& i : issues) msg += "\n" + i;
      return {code, msg};
    });

// ---- check-mlxcables ----

struct MlxcablesOpts {
  HostRoots roots;
};

const bool kMlxcables = register_simple_check<MlxcablesOpts>(
    {"check-ib", "check-mlxcables"},
    "Each cable's DDM diagnostics (/dev/mst/mt*cable_0, `mlxcables -d <dev> --DDM`): WARNING for an ALARM or "
    "WARNING in the output or mlxcables failing; UNKNOWN when there is no cable device (run `mst cable add`).",
    true, "check ib cable ddm", "disable_check_ib_cable_ddm",
    [](OptionBinder& b, MlxcablesOpts& o) { add_rootfs_option(b, o.roots); },
    [](CheckRun& r, const MlxcablesOpts& o) -> CheckOutcome {
      auto devices = mst_devices(o.roots, "mt*cable_0");
      if (devices.empty()) return {ExitCode::UNKNOWN, "No IB cable devices found"};
      Findings v;
      for (const auto& d : devices) {
        auto t = run_tool({"mlxcables", "-d", d, "--DDM"}, remaining_s(r));
        if (!t.ok() && r.log) r.log->warn("{}", t.failure());
        auto one = evaluate_mlxcables_ddm(d, t.out, t.rc);
        v.add(one.code, one.msg);
      }
      return v.outcome();
    });

// ---- check-sm-status ----

const bool kSmStatus = register_simple_check<HostRoots>(
    {"check-ib", "check-sm-status"},
    "The InfiniBand subnet manager through `sminfo`: CRITICAL when it cannot be reached, WARNING when it is not "
    "MASTER or its answer cannot be read.",
    true, "check ib sm status", "disable_check_ib_sm_status", [](OptionBinder&, HostRoots&) {},
    [](CheckRun& r, const HostRoots&) -> CheckOutcome {
      auto t = run_tool({"sminfo"}, remaining_s(r));
      // A missing or hung sminfo prints nothing: say why instead.
      std::string out = !t.ok() && trim(t.out).empty() ? t.failure() : t.out;
      auto v = evaluate_sminfo(out, t.rc);
      return {v.code, v.msg};
    });

// ---- check-ufm-health ----

struct UfmOpts {
  HostRoots roots;
  std::string file = "/opt/ufm/log/opensm-unhealthy-ports.dump";
  bool truncate = false;
};

const bool kUfm = register_simple_check<UfmOpts>(
    {"check-ib", "check-ufm-health"},
    "The ports UFM flags as unhealthy (its opensm-unhealthy-ports.dump, on the UFM node): CRITICAL with the first "
    "20 when there are any; OK when the file is empty or absent. --truncate empties the file after reading, so "
    "an alert is raised once.",
    false, "ib ufm health", "disable_ib_ufm_health",
    [](OptionBinder& b, UfmOpts& o) {
      b.option("--unhealthy-ports-file", "unhealthy_ports_file", o.file, "Path to UFM unhealthy-ports dump file.")
          ->capture_default_str();
      b.flag("--truncate,!--no-truncate", "truncate", o.truncate,
             "Truncate the dump file after reading to avoid stale alerts (default: off).");
      add_rootfs_option(b, o.roots);
    },
    [](CheckRun& r, const UfmOpts& o) -> CheckOutcome {
      std::string path = host_path(o.roots, o.file);
      std::error_code ec;
      std::string content;
      if (std::filesystem::exists(path, ec)) {
        auto text = read_file(path);
        if (!text)
          return {ExitCode::WARN,
                  fmt::format("{}: cannot be read or is larger than {} MiB", o.file, kMaxHostFileBytes >> 20)};
        content = std::move(*text);
      }
      auto v = evaluate_ufm_unhealthy_ports(content);
      if (o.truncate && !trim(content).empty()) {
        int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0) {
          ::close(fd);
          if (r.log) r.log->info("Truncated {}", o.file);
        } else if (r.log) {
          r.log->warn("Failed to truncate {}: {}", o.file, std::strerror(errno));
        }
      }
      return {v.code, v.msg};
    });

}  // namespace
}  // namespace gcm::health
