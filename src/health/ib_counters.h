// check-ib check-ib-counters' judgement of the InfiniBand port counters read from sysfs
// (/sys/class/infiniband/<dev>/ports/<port>/counters/<counter>), with GCM's rules: no port is WARNING; a critical
// counter (link_downed by default) above zero, or a total of the error counters above --crit-threshold, is
// CRITICAL; a total above --warn-threshold WARNING. A pure function of the values, so it is unit-tested without a
// host.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "health/exit_code.h"

namespace gcm::health {

// GCM's error counters, in its order (the order of the per-port details and metrics).
const std::vector<std::string>& ib_error_counters();
// Throughput counters: metrics only, never judged.
const std::vector<std::string>& ib_throughput_counters();

struct IbPortCounters {
  std::string device, port;                              // "mlx5_0", "1"
  std::vector<std::pair<std::string, uint64_t>> errors;  // the error counters this port has, in GCM's order
  std::vector<std::pair<std::string, uint64_t>> throughput;
  // Counter files that exist but hold no number ("counters/symbol_error: 'x'"): a counter that cannot be read
  // may hide errors, so these make the check at least WARNING (GCM skips them silently).
  std::vector<std::string> unreadable;
};

struct IbCountersVerdict {
  ExitCode code = ExitCode::OK;
  std::string msg;  // Nagios form: summary | metrics, then one line per port with errors, then | per-port metrics
};

IbCountersVerdict evaluate_ib_counters(const std::vector<IbPortCounters>& ports, int64_t warn_threshold,
                                       int64_t crit_threshold, const std::set<std::string>& critical_counters);

}  // namespace gcm::health
