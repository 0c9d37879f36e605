// Watches amdsmi's event notifications, AMD's analogue of XIDs, on its own thread: every GPU registered
// (amdsmi_init_gpu_event_notification and a mask of VM fault, thermal throttle, GPU pre/post reset and ring hang),
// then amdsmi_get_gpu_event_notification in a loop with a short timeout so stop() is prompt. Registration runs on a
// worker under the call timeout: a GPU whose calls hang is left unwatched instead of holding the watcher. A library
// without the event API, or a GPU that refuses registration, is said once in the stats and in one log line; the
// other GPUs are watched all the same.
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

#include "gpu/amdsmi_library.h"

namespace gcm::agent {

struct AmdsmiEvent {
  unsigned gpu = 0;     // the GPU's index, in the sampler's order (sockets, then their processors)
  uint32_t type = 0;    // amdsmi_evt_notification_type_t
  std::string message;  // the driver's text
  double unix_s = 0;    // when it was received (the notification carries no time)
};

struct AmdsmiEventWatcherOptions {
  std::chrono::milliseconds wait_timeout{500};   // one amdsmi_get_gpu_event_notification; stop() within about this
  std::chrono::milliseconds call_timeout{5000};  // the enumeration and each GPU's registration
  std::shared_ptr<spdlog::logger> log;           // null: spdlog's default logger
};

struct AmdsmiEventWatcherStats {
  bool running = false;   // the thread is waiting for events
  bool supported = true;  // false: the library lacks the event API or no GPU could be registered
  unsigned gpus_registered = 0;
  uint64_t events = 0;
  uint64_t wait_errors = 0;           // answers other than success and no data
  std::vector<std::string> problems;  // each said once
};

class AmdsmiEventWatcher {
 public:
  using Callback = std::function<void(const AmdsmiEvent&)>;

  // The library must outlive the watcher (the agent stops the watcher before it lets the library go).
  AmdsmiEventWatcher(std::shared_ptr<AmdsmiLibrary> lib, Callback callback, AmdsmiEventWatcherOptions options = {});
  ~AmdsmiEventWatcher();  // stops
  AmdsmiEventWatcher(const AmdsmiEventWatcher&) = delete;
  AmdsmiEventWatcher& operator=(const AmdsmiEventWatcher&) = delete;

  void start();
  void stop();
  AmdsmiEventWatcherStats stats() const;

 private:
  void run();
  bool register_gpus(std::vector<amdsmi::ProcessorHandle>* handles);
  void problem(const std::string& what);
  void pause();

  std::shared_ptr<AmdsmiLibrary> lib_;
  Callback callback_;
  AmdsmiEventWatcherOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  AmdsmiEventWatcherStats stats_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace gcm::agent
