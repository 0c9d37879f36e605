// The node's hardware events from the kernel log other than GPU XIDs (health/kernel_event.h: NVSwitch SXids, link
// downs and ups, machine checks, PCIe AER errors), counted for /metrics and turned into LOG records, as the XID
// tracker does for XIDs. Counts are since the agent started; like XIDs, a restarted agent finds this boot's events
// again because the follower rereads the kernel log since boot.
//
// Labels come from the log's text, so their number is bounded: past max_series distinct (kind, class, device) the
// device of a new one is counted as "other" (and the same for SXids, whose code then becomes -1), so a flood of odd
// lines cannot grow /metrics without end. Thread-safe: the follower adds from its thread, the agent reads from its.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "core/record.h"
#include "health/kernel_event.h"

namespace gcm::agent {

struct KernelEventTrackerOptions {
  size_t max_series = 1024;  // distinct label sets per metric
  size_t max_logs = 4096;    // LOG records kept until taken; past it the oldest go
};

class KernelEventTracker {
 public:
  explicit KernelEventTracker(KernelEventTrackerOptions options = {});

  void add(const health::KernelEvent& event, double unix_s);

  // METRIC records of the counts (schemas NodeKernelEvents and NvswitchSxidErrors).
  std::vector<Record> records() const;
  // The LOG records (schema NodeKernelEvent) of events added since the last call.
  std::vector<Record> take_log_records();
  uint64_t total() const;  // events added since start

 private:
  struct Count {
    uint64_t n = 0;
    double last_unix = 0;
    void add(double t);
  };
  using EventKey = std::tuple<std::string, std::string, std::string>;  // kind, class, device
  using SxidKey = std::tuple<int, std::string, int>;                   // nvswitch, pci_bus_id, code

  KernelEventTrackerOptions options_;
  mutable std::mutex mu_;
  std::map<EventKey, Count> events_;
  std::map<SxidKey, Count> sxids_;
  std::vector<Record> pending_logs_;
  uint64_t total_ = 0;
};

}  // namespace gcm::agent
