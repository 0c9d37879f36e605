// Watches NVML's event API for critical XIDs on its own thread: an event set with every GPU registered for
// nvml::kEventTypeXidCriticalError, and nvmlEventSetWait in a loop with a short timeout so stop() is prompt.
// NVML reports an XID here even when the kernel log is unreadable (a container without /dev/kmsg); the tracker
// (agent/xid_tracker.h) de-duplicates the two sources.
// A library without the event entry points, or a GPU that refuses registration (NOT_SUPPORTED on some GPUs and
// vGPUs), is said once in the stats and in one log line; the other GPUs are watched all the same.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "gpu/nvml_api.h"

namespace gcm::agent {

struct NvmlXid {
  unsigned gpu = 0;            // NVML index
  unsigned long long xid = 0;  // the event's data: the XID code
  double unix_s = 0;           // when the event was received (NVML's event carries no time)
};

struct NvmlEventWatcherOptions {
  std::chrono::milliseconds wait_timeout{500};  // one nvmlEventSetWait; stop() returns within about this
  // Registering a GPU (its handle, then nvmlDeviceRegisterEvents) runs on a worker under this timeout: a GPU whose
  // calls hang is left out of the set instead of holding the watcher (and the agent's stop) for ever.
  std::chrono::milliseconds call_timeout{5000};
  std::shared_ptr<spdlog::logger> log;          // null: spdlog's default logger
};

struct NvmlEventWatcherStats {
  bool running = false;   // the thread is waiting for events
  bool supported = true;  // false: the library lacks the event API or no GPU could be registered
  unsigned gpus_registered = 0;
  uint64_t events = 0;                // XID events delivered
  uint64_t wait_errors = 0;           // nvmlEventSetWait answers other than success and timeout
  std::vector<std::string> problems;  // each said once: "GPU 3: registering for XID events: Not Supported"
};

class NvmlEventWatcher {
 public:
  using Callback = std::function<void(const NvmlXid&)>;

  // `api` is the loaded library's table (NvmlLibrary::api()); the library must outlive the watcher.
  NvmlEventWatcher(const nvml::Api& api, Callback callback, NvmlEventWatcherOptions options = {});
  ~NvmlEventWatcher();  // stops
  NvmlEventWatcher(const NvmlEventWatcher&) = delete;
  NvmlEventWatcher& operator=(const NvmlEventWatcher&) = delete;

  void start();  // starts the thread (once): it registers the GPUs, then waits for events
  void stop();   // returns within about one wait_timeout
  NvmlEventWatcherStats stats() const;

 private:
  void run();
  // Creates the set and registers every GPU; false (and the set freed) when nothing can be watched.
  bool register_gpus(nvml::EventSet* set, std::vector<nvml::Device>* handles);
  void problem(const std::string& what);
  void pause();  // after a failed wait: do not spin on a driver that fails at once

  const nvml::Api& api_;
  Callback callback_;
  NvmlEventWatcherOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;  // wakes pause() on stop
  NvmlEventWatcherStats stats_;
  std::atomic<bool> stopping_{false};
  bool abandoned_ = false;  // a registration timed out and may still touch the set: it is never freed
  std::thread thread_;
};

}  // namespace gcm::agent
