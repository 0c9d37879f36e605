#include "health/ib_counters.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gcm::health {

const std::vector<std::string>& ib_error_counters() {
  static const std::vector<std::string> v = {"symbol_error",
                                             "link_error_recovery",
                                             "link_downed",
                                             "port_rcv_errors",
                                             "port_rcv_remote_physical_errors",
                                             "port_rcv_switch_relay_errors",
                                             "port_xmit_discards",
                                             "port_xmit_constraint_errors",
                                             "port_rcv_constraint_errors",
                                             "local_link_integrity_errors",
                                             "excessive_buffer_overrun_errors",
                                             "VL15_dropped"};
  return v;
}

const std::vector<std::string>& ib_throughput_counters() {
  static const std::vector<std::string> v = {"port_xmit_data", "port_rcv_data", "port_xmit_packets",
                                             "port_rcv_packets"};
  return v;
}

namespace {

// Counters are unsigned 64-bit in sysfs; the sum of many saturates rather than wrapping to a small number.
uint64_t add_saturating(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

}  // namespace

IbCountersVerdict evaluate_ib_counters(const std::vector<IbPortCounters>& ports, int64_t warn_threshold,
                                       int64_t crit_threshold, const std::set<std::string>& critical_counters) {
  if (ports.empty()) return {ExitCode::WARN, "No IB ports discovered"};
  uint64_t total = 0;
  size_t ports_with_errors = 0;
  bool critical_counter = false;
  std::vector<std::string> details, unreadable, port_metrics;
  for (const auto& p : ports) {
    std::string label = p.device + "/" + p.port;
    uint64_t port_total = 0;
    std::vector<std::string> nonzero;
    for (const auto& [name, value] : p.errors) {
      port_total = add_saturating(port_total, value);
      if (value > 0) {
        nonzero.push_back(fmt::format("{}={}", name, value));
        if (critical_counters.count(name)) critical_counter = true;
      }
      port_metrics.push_back(fmt::format("'{}.{}'={};{};{}", label, name, value, warn_threshold, crit_threshold));
    }
    for (const auto& [name, value] : p.throughput)
      port_metrics.push_back(fmt::format("'{}.{}'={}", label, name, value));
    total = add_saturating(total, port_total);
    if (port_total > 0) {
      ++ports_with_errors;
      details.push_back(fmt::format("{}: {}", label, fmt::join(nonzero, "; ")));
    }
    for (const auto& u : p.unreadable) unreadable.push_back(fmt::format("{}: {}", label, u));
  }
  // The thresholds compare as signed values: a negative threshold makes any total exceed it, as in GCM.
  auto above = [&](int64_t threshold) { return threshold < 0 || total > static_cast<uint64_t>(threshold); };
  ExitCode code = ExitCode::OK;
  if (critical_counter || above(crit_threshold))
    code = ExitCode::CRITICAL;
  else if (above(warn_threshold))
    code = ExitCode::WARN;
  if (!unreadable.empty()) code = worse(code, ExitCode::WARN);
  std::string msg = fmt::format(
      "{} ports checked, {} with errors, total_errors={} | 'total_errors'={};{};{} "
      "'ports_with_errors'={} 'ports_checked'={}",
      ports.size(), ports_with_errors, total, total, warn_threshold, crit_threshold, ports_with_errors, ports.size());
  for (const auto& d : details) msg += "\n" + d;
  for (const auto& u : unreadable) msg += "\nunreadable counter " + u;
  if (!port_metrics.empty()) msg += fmt::format("\n| {}", fmt::join(port_metrics, " "));
  return {code, msg};
}

}  // namespace gcm::health
