// health_checks check-ib check-ib-counters: the error counters of every InfiniBand port in sysfs
// (<sysfs>/class/infiniband/<dev>/ports/<port>/counters/), judged by health/ib_counters.h. Where check-iblink says
// a link is there, this says whether it is clean: symbol errors, link recoveries and downs slow NCCL collectives
// long before a link drops.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "cli/option_binder.h"
#include "health/checks/host_check.h"
#include "health/ib_counters.h"

namespace gcm::health {
namespace {

struct IbCountersOpts {
  HostRoots roots;
  int64_t warn_threshold = 0;
  int64_t crit_threshold = 100;
  std::vector<std::string> critical_counters = {"link_downed"};
};

// Sorted names of a directory's entries; empty when it cannot be listed (GCM logs and goes on).
std::vector<std::string> sorted_entries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Reads one counter into `into`; a missing file is a counter this HCA or kernel does not have (skipped, as GCM
// does), a file without a number is named in `unreadable`.
void read_counter(const std::string& dir, const std::string& name, std::vector<std::pair<std::string, uint64_t>>& into,
                  std::vector<std::string>& unreadable) {
  auto text = read_trimmed(dir + "/" + name);
  if (!text) return;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || text->empty()) {
    unreadable.push_back(fmt::format("counters/{}: '{}' is not a non-negative integer", name, text->substr(0, 40)));
    return;
  }
  into.emplace_back(name, v);
}

std::vector<IbPortCounters> read_ports(const HostRoots& roots) {
  std::vector<IbPortCounters> ports;
  std::string base = roots.sys("class/infiniband");
  for (const auto& dev : sorted_entries(base)) {
    for (const auto& port : sorted_entries(base + "/" + dev + "/ports")) {
      std::string counters = base + "/" + dev + "/ports/" + port + "/counters";
      std::error_code ec;
      if (!std::filesystem::is_directory(counters, ec)) continue;
      IbPortCounters pc{dev, port, {}, {}, {}};
      for (const auto& c : ib_error_counters()) read_counter(counters, c, pc.errors, pc.unreadable);
      for (const auto& c : ib_throughput_counters()) read_counter(counters, c, pc.throughput, pc.unreadable);
      ports.push_back(std::move(pc));
    }
  }
  return ports;
}

const bool kIbCounters = register_simple_check<IbCountersOpts>(
    {"check-ib", "check-ib-counters"},
    "The error counters of every InfiniBand port in sysfs (symbol_error, link_error_recovery, link_downed, "
    "port_rcv_errors, ...): CRITICAL when a --critical-counters counter is above 0 or the total is above "
    "--crit-threshold, WARNING when the total is above --warn-threshold or no port is found. Nagios metrics: "
    "total_errors, ports_with_errors, ports_checked and <dev>/<port>.<counter> (throughput counters too).",
    false, "ib port counters", "disable_ib_port_counters",
    [](OptionBinder& b, IbCountersOpts& o) {
      b.option("--warn-threshold", "warn_threshold", o.warn_threshold,
               "Total error count above which the check returns WARNING.")
          ->capture_default_str();
      b.option("--crit-threshold", "crit_threshold", o.crit_threshold,
               "Total error count above which the check returns CRITICAL.")
          ->capture_default_str();
      b.option("--critical-counters", "critical_counters", o.critical_counters,
               "Counter names that make the check CRITICAL when above zero; repeat for several.")
          ->capture_default_str()
          ->check(CLI::IsMember(ib_error_counters()));
      add_sysfs_option(b, o.roots);
    },
    [](CheckRun&, const IbCountersOpts& o) -> CheckOutcome {
      std::set<std::string> critical(o.critical_counters.begin(), o.critical_counters.end());
      IbCountersVerdict v = evaluate_ib_counters(read_ports(o.roots), o.warn_threshold, o.crit_threshold, critical);
      return {v.code, v.msg};
    });

}  // namespace
}  // namespace gcm::health
