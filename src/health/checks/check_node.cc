// health_checks check-node: uptime (/proc/uptime), check-module (/proc/modules, what lsmod prints), check-dnf-repos
// (`dnf repolist -v --refresh`).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/option_binder.h"
#include "health/checks/host_check.h"

namespace gcm::health {
namespace {

const bool kCheckNodeGroupRegistered =
    register_health_group("check-node", "Node checks: recently booted, kernel modules loaded, package repositories.");

struct UptimeOpts {
  HostRoots roots;
  long long threshold = 600;
};

const bool kUptime = register_simple_check<UptimeOpts>(
    {"check-node", "uptime"}, "WARNING when the node booted less than --uptime-threshold seconds ago.", true,
    "check uptime", "disable_check_uptime",
    [](OptionBinder& b, UptimeOpts& o) {
      b.option("--uptime-threshold", "uptime_threshold", o.threshold, "Seconds.")->capture_default_str();
      add_procfs_option(b, o.roots);
    },
    [](CheckRun&, const UptimeOpts& o) -> CheckOutcome {
      auto text = read_file(o.roots.proc("uptime"));
      auto f = text ? split_ws(*text) : std::vector<std::string>{};
      auto secs = f.empty() ? std::nullopt : parse_int(f[0].substr(0, f[0].find('.')));
      if (!secs) return {ExitCode::WARN, fmt::format("cannot read seconds since boot from {}", o.roots.proc("uptime"))};
      if (*secs > o.threshold) return {ExitCode::OK, fmt::format("Node up for {} s.", *secs)};
      return {ExitCode::WARN, fmt::format("Node recently booted: up for {} s (threshold {} s).", *secs, o.threshold)};
    });

struct ModuleOpts {
  HostRoots roots;
  std::vector<std::string> modules;
  std::vector<long long> counts{1};
};

const bool kModule = register_simple_check<ModuleOpts>(
    {"check-node", "check-module"},
    "CRITICAL when fewer than --mod_count loaded modules have -m MODULE in their name (as `lsmod | grep MODULE`, but "
    "on names only).",
    true, "check module", "disable_check_module",
    [](OptionBinder& b, ModuleOpts& o) {
      b.option("-m,--module", "module", o.modules, "A module name (substring), repeatable.")
          ->required()
          ->allow_extra_args(false);
      b.option("--mod_count,--mod-count", "mod_count", o.counts,
               "Minimum count per -m, in the same order, repeatable (default 1 for a single -m).")
          ->allow_extra_args(false);
      add_procfs_option(b, o.roots);
    },
    [](CheckRun&, const ModuleOpts& o) -> CheckOutcome {
      std::vector<long long> counts = o.counts;
      if (counts.size() == 1 && o.modules.size() > 1 && counts[0] == 1) counts.assign(o.modules.size(), 1);
      if (counts.size() != o.modules.size())
        throw CheckUsageError(fmt::format("--mod_count was given {} times for {} modules; give one per -m",
                                          counts.size(), o.modules.size()));
      auto text = read_file(o.roots.proc("modules"));
      if (!text) return {ExitCode::WARN, fmt::format("cannot read {}", o.roots.proc("modules"))};
      std::vector<std::string> names;
      for (const auto& line : split_lines(*text)) {
        auto f = split_ws(line);
        if (!f.empty()) names.push_back(f[0]);
      }
      Findings v;
      for (size_t i = 0; i < o.modules.size(); ++i) {
        long long n = std::count_if(names.begin(), names.end(),
                                    [&](const std::string& m) { return m.find(o.modules[i]) != std::string::npos; });
        v.add(n >= counts[i] ? ExitCode::OK : ExitCode::CRITICAL,
              fmt::format("Module {}: {} loaded, expected at least {}.", o.modules[i], n, counts[i]));
      }
      return v.outcome();
    });

struct DnfOpts {};

const bool kDnf = register_simple_check<DnfOpts>(
    {"check-node", "check-dnf-repos"}, "CRITICAL when `dnf repolist -v --refresh` fails or prints nothing.", true,
    "check dnf repos", "disable_check_dnf_repos", [](OptionBinder&, DnfOpts&) {},
    [](CheckRun& r, const DnfOpts&) -> CheckOutcome {
      auto t = run_tool({"dnf", "repolist", "-v", "--refresh"}, r.timeout_s);
      if (!t.ok()) return {ExitCode::CRITICAL, fmt::format("dnf repolist failed: {}", t.failure())};
      if (trim(t.out).empty()) return {ExitCode::CRITICAL, "dnf repolist printed nothing"};
      return {ExitCode::OK, "dnf repositories are reachable."};
    });

}  // namespace
}  // namespace gcm::health
