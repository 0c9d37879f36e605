// health_checks check-service: service-status (systemctl), package-version (rpm or dpkg-query), the Slurm checks
// slurmctld-count (scontrol ping), node-slurm-state (sinfo), cluster-availability (scontrol show node) and
// ssh-connection. Every tool runs by argv with --timeout; a missing tool is named in the message.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/option_binder.h"
#include "health/checks/host_check.h"

namespace gcm::health {
namespace {

const bool kCheckServiceGroupRegistered = register_health_group(
    "check-service", "Service checks: systemd units, package versions, Slurm daemons and node states, ssh.");

struct ServiceOpts {
  std::vector<std::string> services;
};

const bool kService = register_simple_check<ServiceOpts>(
    {"check-service", "service-status"}, "CRITICAL when `systemctl is-active SERVICE` fails for a -s SERVICE.", true,
    "service status", "disable_service_status",
    [](OptionBinder& b, ServiceOpts& o) {
      b.option("-s,--service", "service", o.services, "A systemd unit that must be active, repeatable.")
          ->required()
          ->allow_extra_args(false);
    },
    [](CheckRun& r, const ServiceOpts& o) -> CheckOutcome {
      Findings v;
      for (const auto& s : o.services) {
        auto t = run_tool({"systemctl", "is-active", s}, r.timeout_s);
        std::string status = trim(t.out);
        if (t.ok())
          v.add(ExitCode::OK, fmt::format("Service {}: running. Status: {}", s, status));
        else
          v.add(ExitCode::CRITICAL,
                fmt::format("Service {}: not running. error_code: {}, status: {}{}", s, t.rc,
                            status.empty() ? "-" : status, t.missing || t.timed_out ? " (" + t.failure() + ")" : ""));
      }
      return v.outcome();
    });

struct PackageOpts {
  std::string package, version, manager = "rpm";
};

const bool kPackage = register_simple_check<PackageOpts>(
    {"check-service", "package-version"},
    "CRITICAL when the installed version of -p PACKAGE is not -v VERSION (rpm's %{VERSION}-%{RELEASE}, or dpkg's "
    "Version with --package-manager dpkg).",
    true, "package version", "disable_package_version",
    [](OptionBinder& b, PackageOpts& o) {
      b.option("-p,--package", "package", o.package, "The package.")->required();
      b.option("-v,--version", "version", o.version, "The expected version.")->required();
      b.option("--package-manager", "package_manager", o.manager, "rpm or dpkg.")
          ->capture_default_str()
          ->check(CLI::IsMember({"rpm", "dpkg"}));
    },
    [](CheckRun& r, const PackageOpts& o) -> CheckOutcome {
      std::vector<std::string> argv =
          o.manager == "rpm" ? std::vector<std::string>{"rpm", "-q", "--qf", "%{VERSION}-%{RELEASE}\n", o.package}
                             : std::vector<std::string>{"dpkg-query", "-W", "-f", "${Version}\n", o.package};
      auto t = run_tool(argv, r.timeout_s);
      if (!t.ok()) return {ExitCode::WARN, fmt::format("Package {}: {}", o.package, t.failure())};
      std::string found = trim(t.out);
      if (found == o.version)
        return {ExitCode::OK, fmt::format("Package {}: version {} as expected.", o.package, found)};
      return {ExitCode::CRITICAL,
              fmt::format("Version missmatch. Package {}: expected {}, found {}.", o.package, o.version, found)};
    });

struct CtldOpts {
  int64_t count = 0;
};

const bool kCtld = register_simple_check<CtldOpts>(
    {"check-service", "slurmctld-count"},
    "CRITICAL when `scontrol ping` reports fewer slurmctld daemons UP than --slurmctld-count.", true, "slurmctld count",
    "disable_slrmctld_count",
    [](OptionBinder& b, CtldOpts& o) {
      b.option("--slurmctld-count", "slurmctld_count", o.count, "How many slurmctld must answer.")->required();
    },
    [](CheckRun& r, const CtldOpts& o) -> CheckOutcome {
      auto t = run_tool({"scontrol", "ping"}, r.timeout_s);
      // scontrol ping exits non-zero when a controller is down, yet still prints a line per controller: those
      // lines are counted (the reference's WARN for any non-zero exit hid a dead primary as a mere warning).
      long long up = 0, lines = 0;
      for (const auto& line : split_lines(t.out)) {
        if (line.find("Slurmctld") == std::string::npos && line.find(" is ") == std::string::npos) continue;
        ++lines;
        if (line.find("UP") != std::string::npos) ++up;
      }
      if (lines == 0) return {ExitCode::WARN, t.ok() ? "scontrol ping printed no controller" : t.failure()};
      if (up < o.count)
        return {ExitCode::CRITICAL, fmt::format("Insufficient slurmctld daemon count. Expected: {}, found: {}. {}",
                                                o.count, up, trim(t.out))};
      return {ExitCode::OK, fmt::format("slurmctld daemons up: {} (expected {}).", up, o.count)};
    });

struct NodeStateOpts {
  std::string node;
};

const bool kNodeState = register_simple_check<NodeStateOpts>(
    {"check-service", "node-slurm-state"},
    "WARNING when this node's Slurm state (sinfo) cannot accept jobs (down, drained, draining, fail, maint, unknown, "
    "not responding) or is not a known good state.",
    true, "slurm state", "disable_slurm_state",
    [](OptionBinder& b, NodeStateOpts& o) {
      b.option("--node", "node", o.node,
               "The Slurm node name (default: the hostname, without its domain for clusters rsc, ava, sbx).");
    },
    [](CheckRun& r, const NodeStateOpts& o) -> CheckOutcome {
      std::string node = o.node;
      if (node.empty()) {
        node = node_hostname();
        if (r.cluster == "rsc" || r.cluster == "ava" || r.cluster == "sbx") node = node.substr(0, node.find('.'));
      }
      auto t = run_tool({"sinfo", "-n", node, "-o", "%T", "-h"}, r.timeout_s);
      if (!t.ok()) return {ExitCode::WARN, t.failure()};
      // One line per partition of the node: the distinct states, in order.
      std::vector<std::string> lines;
      for (const auto& l : split_lines(t.out))
        if (!trim(l).empty() && std::find(lines.begin(), lines.end(), trim(l)) == lines.end()) lines.push_back(trim(l));
      std::string state = fmt::format("{}", fmt::join(lines, ", "));
      for (const char* bad : {"down", "drain", "fail", "maint", "unknown", "not_responding"})
        if (state.find(bad) != std::string::npos)
          return {ExitCode::WARN, fmt::format("node {} is in bad state: {}, and cannot accept jobs.", node, state)};
      if (state.find('*') != std::string::npos)
        return {ExitCode::WARN, fmt::format("node {} is not responding: {}, and cannot accept jobs.", node, state)};
      for (const char* good : {"allocated", "completing", "idle", "mixed", "planned", "reserved"})
        if (!state.empty() && state.find(good) != std::string::npos)
          return {ExitCode::OK, fmt::format("node {} is in state {}.", node, state)};
      return {ExitCode::WARN, fmt::format("node {} is in undefined state: '{}'", node, state)};
    });

struct AvailOpts {
  int critical = 25, warning = 15;
};

const bool kAvail = register_simple_check<AvailOpts>(
    {"check-service", "cluster-availability"},
    "The share of the cluster's nodes that are DOWN or DRAIN (scontrol show node): CRITICAL above "
    "--critical_threshold percent, WARNING above --warning_threshold.",
    true, "slurm cluster availability", "disable_slurm_cluster_avail",
    [](OptionBinder& b, AvailOpts& o) {
      b.option("--critical_threshold,--critical-threshold", "critical_threshold", o.critical, "Percent.")
          ->capture_default_str()
          ->check(CLI::Range(0, 100));
      b.option("--warning_threshold,--warning-threshold", "warning_threshold", o.warning, "Percent.")
          ->capture_default_str()
          ->check(CLI::Range(0, 100));
    },
    [](CheckRun& r, const AvailOpts& o) -> CheckOutcome {
      auto t = run_tool({"scontrol", "show", "node"}, r.timeout_s);
      if (!t.ok()) return {ExitCode::WARN, t.failure()};
      std::map<std::string, long long> states;
      long long total = 0, bad = 0;
      for (const auto& w : split_ws(t.out)) {
        if (w.rfind("State=", 0) != 0) continue;
        std::string s = w.substr(6);
        s.erase(std::remove(s.begin(), s.end(), '*'), s.end());
        ++states[s];
        ++total;
        if (s.find("DOWN") != std::string::npos || s.find("DRAIN") != std::string::npos) ++bad;
      }
      if (total == 0) return {ExitCode::WARN, "scontrol show node listed no node state"};
      double pct = static_cast<double>(bad) * 100.0 / static_cast<double>(total);
      std::vector<std::string> parts;
      for (const auto& [s, n] : states) parts.push_back(fmt::format("{} {}", n, s));
      std::string msg =
          fmt::format("{:.1f}% of nodes are down or drained ({}/{}): {}", pct, bad, total, fmt::join(parts, ", "));
      if (pct > o.critical) return {ExitCode::CRITICAL, msg};
      if (pct > o.warning) return {ExitCode::WARN, msg};
      return {ExitCode::OK, msg};
    });

struct SshOpts {
  std::vector<std::string> hosts;
};

const bool kSsh = register_simple_check<SshOpts>(
    {"check-service", "ssh-connection"},
    "CRITICAL when `ssh -o BatchMode=yes HOST exit` fails for a --host (never waits for a password).", true,
    "check ssh", "disable_check_ssh",
    [](OptionBinder& b, SshOpts& o) {
      b.option("--hostaddress,--host", "hostaddress", o.hosts, "A host to reach, repeatable.")
          ->required()
          ->allow_extra_args(false);
    },
    [](CheckRun& r, const SshOpts& o) -> CheckOutcome {
      Findings v;
      for (const auto& h : o.hosts) {
        auto t = run_tool({"ssh", "-o", "BatchMode=yes", h, "exit"}, r.timeout_s);
        if (t.ok())
          v.add(ExitCode::OK, fmt::format("Host {}: ssh connection succeeded.", h));
        else
          v.add(ExitCode::CRITICAL, fmt::format("Host {}: ssh connection failed. {}", h, t.failure()));
      }
      return v.outcome();
    });

}  // namespace
}  // namespace gcm::health
