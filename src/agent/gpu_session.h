// The agent's hold on its GPU library and its GPUs: NVML or AMD's amdsmi (gcm --backend, gpu_backend_choice.h), loaded
// again with backoff while it is missing (1 s doubling to 5 min: no crash loop and no log line per second) or after
// a driver reload; each sample of every GPU through the per-GPU workers (gpu/gpu_sampler.h: a hung GPU stalls only
// itself) into the window's accumulators; the GPUs' PCI addresses, indexes and UUIDs; the resets that clear a GPU's
// XIDs.
// Owned by the sampling thread (Agent::run): nothing here is shared with another thread (the sampler's workers are
// its own).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/agent_counters.h"
#include "agent/agent_options.h"
#include "agent/gpu_address_map.h"
#include "agent/window.h"
#include "agent/xid_tracker.h"
#include "core/retry.h"
#include "gpu/amdsmi_library.h"
#include "gpu/gpu_backend_choice.h"
#include "gpu/gpu_sampler.h"
#include "gpu/nvml_library.h"

namespace spdlog {
class logger;
}

namespace gcm::agent {

class GpuSession {
 public:
  // `before_unload` runs before the library is let go (what uses it, the NVML or amdsmi event watcher, stops there).
  GpuSession(XidTracker& xids, AgentCounters& counters, std::shared_ptr<spdlog::logger> log,
             std::function<void()> before_unload);

  // The driver's own list of the GPUs (under --path.procfs and --path.sysfs), for the GPUs NVML never identified:
  // read at start, before any sample, and again whenever NVML is loaded.
  void load_host_gpus(const AgentOptions& opts);
  // Loads the GPU library when it is not loaded and the backoff allows; true when GPUs can be sampled.
  bool ensure_loaded(const AgentOptions& opts);
  // Lets the library go and loads it again after the backoff's next wait.
  void unload(const std::string& why);

  // One sample of every GPU into the accumulators, with `hostname` in its records. Every GPU erroring
  // (UNINITIALIZED, DRIVER_NOT_LOADED after an unload) for 5 samples in a row unloads the library: its state is
  // gone, so it is loaded and initialised again rather than asked forever. Needs ensure_loaded().
  std::vector<DeviceResult> sample(const std::string& hostname);

  bool loaded() const { return sampler_ != nullptr; }
  // NVML's table when the library in use is NVML (its XID event watcher reads it); null for amdsmi or none.
  const NvmlLibrary* nvml_library() const;
  // amdsmi, when it is the library in use (its event watcher shares it); null otherwise.
  std::shared_ptr<AmdsmiLibrary> amdsmi_library() const;
  // "NVML", "amdsmi", or "a GPU library" while gcm --backend auto has none: for messages and the state file.
  const std::string& library_name() const { return library_name_; }
  // The counters' source name of the sampling: "nvml" or "amdsmi".
  const char* source_name() const;
  unsigned gpu_count() const { return sampler_ ? sampler_->device_count() : 0; }
  std::string driver_version() const { return sampler_ ? sampler_->driver_version() : ""; }
  const std::string& error() const { return error_; }  // "" while the library works
  const GpuAddressMap& addresses() const { return addresses_; }
  std::vector<GpuWindowAccumulator>& accumulators() { return acc_; }
  bool window_has_samples() const;  // any GPU sampled since the last window closed

 private:
  void note_resets(const DeviceResult& r, GpuState before, bool first);
  double retry_later();  // the seconds until NVML is asked again

  XidTracker& xids_;
  AgentCounters& counters_;
  std::shared_ptr<spdlog::logger> log_;
  std::function<void()> before_unload_;

  std::unique_ptr<GpuSampler> sampler_;
  std::string library_name_ = "NVML";
  std::string error_;
  Backoff backoff_{1, 300};
  std::chrono::steady_clock::time_point next_try_ = std::chrono::steady_clock::now();
  int all_gone_samples_ = 0;  // samples in a row in which no GPU answered: the driver may have been reloaded
  std::vector<GpuWindowAccumulator> acc_;
  GpuAddressMap addresses_;  // PCI address <-> index and UUID, whatever the GPUs answer
  std::map<unsigned, GpuState> last_state_;
  std::map<unsigned, int64_t> recovery_;  // each GPU's last recovery action (0: none)
};

}  // namespace gcm::agent
