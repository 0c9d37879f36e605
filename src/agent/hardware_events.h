// The node's hardware events as they happen, between two windows: XIDs from the kernel log and from NVML events
// (one tracker de-duplicates and counts them), AMD's GPU events from amdsmi (amd_events.h), the kernel log's other events (SXids, link flaps, machine checks,
// PCIe AER) and the node's own reasons they raise (node_health.h). Each window takes what arrived: XIDs into their
// GPU's summary for the detector, counters and log records for the export.
//
// Threads: the kernel-log follower's thread calls on_kmsg(), the NVML event watcher's thread adds to the XID
// tracker, the amdsmi event watcher's to the AMD event tracker; XidTracker, AmdEventTracker, KernelEventTracker and
// NodeHealth lock for themselves. Everything else here (the followers'
// lifetimes, the window's cursor into the tracker, the node reasons last said) is the sampling thread's.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_counters.h"
#include "agent/amd_events.h"
#include "agent/amdsmi_events.h"
#include "agent/kernel_events.h"
#include "agent/kmsg_follower.h"
#include "agent/node_health.h"
#include "agent/nvml_events.h"
#include "agent/window_export.h"
#include "agent/xid_tracker.h"
#include "detector/detector.h"

namespace spdlog {
class logger;
}

namespace gcm::agent {

class HardwareEvents {
 public:
  // XIDs and node reasons stay active `clear_after_s` (--xid-clear-after) unless something clears them first.
  HardwareEvents(double clear_after_s, std::shared_ptr<spdlog::logger> log);
  ~HardwareEvents();  // stops the followers

  // Follows the kernel log at `path` (once: later calls do nothing).
  void start_kmsg(const std::string& path);
  // One kernel-log record, with the XID or SXid the follower read from it; the follower's thread.
  void on_kmsg(const KmsgRecord& record, const std::optional<health::XidLine>& xid);
  // Watches NVML's XID events (once, until stop_gpu_events()); the library must outlive the watch.
  void start_nvml_events(const nvml::Api& api, std::chrono::milliseconds call_timeout);
  // Watches amdsmi's GPU events (once, until stop_gpu_events()).
  void start_amdsmi_events(std::shared_ptr<AmdsmiLibrary> lib, std::chrono::milliseconds call_timeout);
  void stop_gpu_events();  // NVML's and amdsmi's watchers, before the library they use is unloaded
  void stop();

  XidTracker& xids() { return xids_; }
  NodeHealth& node() { return node_health_; }

  // The XIDs and AMD GPU events since the last window, into the summary of their GPU (the detector's `xid` reason),
  // each said in the log. A GPU_POST_RESET event clears that GPU's reset-cleared XIDs.
  void add_window_xids(std::vector<detector::GpuWindow>& summaries);
  // The XID and kernel-event series and log records as of `now`, and the followers' state as sources.
  void publish(double now, WindowExport& out, AgentCounters& counters);
  // The node reasons as series; each that began, changed or cleared since the last window is said once in the log
  // and is one NodeHealthEvent record (`hostname`, `now_s`: the window's) for the OTLP logs; returns those records.
  std::vector<Record> publish_node_health(const std::vector<NodeStateEntry>& node, const std::string& hostname, double now_s,
                           WindowExport& out);

 private:
  void publish_kernel_events(WindowExport& out);

  std::shared_ptr<spdlog::logger> log_;
  XidTracker xids_;
  KernelEventTracker kernel_events_;
  NodeHealth node_health_;  // the node's own reasons (not one GPU's)

  // The sampling thread's.
  std::unique_ptr<KmsgFollower> kmsg_;
  std::unique_ptr<NvmlEventWatcher> nvml_events_;
  AmdEventTracker amd_events_;
  std::unique_ptr<AmdsmiEventWatcher> amdsmi_events_;
  uint64_t xid_seq_ = 0;                            // the last tracker event put into a window
  std::map<std::string, Health> last_node_health_;  // node reason -> its state in the last window
};

}  // namespace gcm::agent
