#include "agent/amdsmi_events.h"

#include <cstring>

#include <fmt/format.h>

#include "core/clock.h"
#include "gpu/amdsmi_backend.h"
#include "gpu/device_worker.h"

namespace gcm::agent {

namespace {

// The events the agent asks for: AMD's analogues of the XIDs that matter (agent/amd_events.h judges them).
uint64_t watched_mask() {
  uint64_t m = 0;
  for (uint32_t t : {amdsmi::kEvtVmFault, amdsmi::kEvtThermalThrottle, amdsmi::kEvtGpuPreReset,
                     amdsmi::kEvtGpuPostReset, amdsmi::kEvtRingHang})
    m |= amdsmi::event_mask_bit(t);
  return m;
}

}  // namespace

AmdsmiEventWatcher::AmdsmiEventWatcher(std::shared_ptr<AmdsmiLibrary> lib, Callback callback,
                                       AmdsmiEventWatcherOptions options)
    : lib_(std::move(lib)), callback_(std::move(callback)), options_(std::move(options)) {
  if (!options_.log) options_.log = spdlog::default_logger();
}

AmdsmiEventWatcher::~AmdsmiEventWatcher() { stop(); }

void AmdsmiEventWatcher::start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void AmdsmiEventWatcher::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

AmdsmiEventWatcherStats AmdsmiEventWatcher::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void AmdsmiEventWatcher::problem(const std::string& what) {
  {
    std::lock_guard lock(mu_);
    for (const auto& p : stats_.problems)
      if (p == what) return;
    stats_.problems.push_back(what);
  }
  options_.log->warn("amdsmi events: {}", what);
}

void AmdsmiEventWatcher::pause() {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, options_.wait_timeout, [this] { return stopping_.load(); });
}

bool AmdsmiEventWatcher::register_gpus(std::vector<amdsmi::ProcessorHandle>* handles) {
  for (const auto& m : lib_->missing_symbols())
    if (m.find("event_notification") != std::string::npos) {
      problem("the amdsmi library lacks the event notification API (" + m + "): no AMD GPU events");
      return false;
    }
  // The enumeration, then each GPU's registration, on a worker under the call timeout. The job owns what it writes:
  // one that times out may still write later.
  struct Out {
    std::vector<amdsmi::ProcessorHandle> gpus;
    std::vector<std::string> failed;  // per GPU: "" when registered
    std::string error;
    bool enumerated = false;
  };
  auto out = std::make_shared<Out>();
  auto lib = lib_;
  uint64_t mask = watched_mask();
  DeviceWorker worker("gcm-amd-events");
  std::string hung;
  bool finished = worker.start([out, lib, mask](CallWatch& w) {
    out->enumerated = enumerate_amd_gpus(*lib, w, out->gpus, &out->error);
    if (!out->enumerated) return;
    const amdsmi::Api& api = lib->api();
    for (auto h : out->gpus) {
      w.begin("amdsmi_init_gpu_event_notification");
      amdsmi::Status rc = api.InitGpuEventNotification(h);
      w.end();
      if (rc == amdsmi::STATUS_SUCCESS) {
        w.begin("amdsmi_set_gpu_event_notification_mask");
        rc = api.SetGpuEventNotificationMask(h, mask);
        w.end();
      }
      out->failed.push_back(rc == amdsmi::STATUS_SUCCESS ? "" : lib->error_string(rc));
    }
  }) && worker.wait(options_.call_timeout, &hung, std::chrono::steady_clock::now() + 4 * options_.call_timeout) ==
                      DeviceWorker::Outcome::Finished;
  if (!finished) {
    problem(fmt::format("registering the GPUs for events: {} did not return within {} ms; no AMD GPU events",
                        hung.empty() ? "the registration" : hung, options_.call_timeout.count()));
    return false;
  }
  if (!out->enumerated) {
    problem("listing the GPUs: " + out->error);
    return false;
  }
  unsigned registered = 0;
  for (size_t i = 0; i < out->gpus.size(); ++i) {
    bool ok = i < out->failed.size() && out->failed[i].empty();
    if (!ok)
      problem(fmt::format("GPU {}: registering for events: {}", i, i < out->failed.size() ? out->failed[i] : "?"));
    handles->push_back(ok ? out->gpus[i] : nullptr);  // a hole keeps every other GPU at its index
    registered += ok;
  }
  {
    std::lock_guard lock(mu_);
    stats_.gpus_registered = registered;
  }
  if (registered == 0) {
    if (out->gpus.empty()) problem("amdsmi lists no GPU");
    return false;
  }
  return true;
}

void AmdsmiEventWatcher::run() {
  std::vector<amdsmi::ProcessorHandle> handles;
  if (!register_gpus(&handles)) {
    std::lock_guard lock(mu_);
    stats_.supported = false;
    return;
  }
  {
    std::lock_guard lock(mu_);
    stats_.running = true;
  }
  const amdsmi::Api& a = lib_->api();
  int ms = static_cast<int>(std::max<int64_t>(1, options_.wait_timeout.count()));
  constexpr uint32_t kBatch = 16;
  std::vector<amdsmi::EventNotification> batch(kBatch);
  while (!stopping_) {
    uint32_t n = kBatch;
    amdsmi::Status rc = a.GetGpuEventNotification(ms, &n, batch.data());
    if (rc == amdsmi::STATUS_NO_DATA || (rc == amdsmi::STATUS_SUCCESS && n == 0)) continue;
    if (rc != amdsmi::STATUS_SUCCESS) {
      {
        std::lock_guard lock(mu_);
        ++stats_.wait_errors;
      }
      problem("waiting for events: " + lib_->error_string(rc));
      pause();
      continue;
    }
    double now = unix_seconds_now();
    for (uint32_t k = 0; k < n && k < kBatch; ++k) {
      const auto& e = batch[k];
      AmdsmiEvent ev;
      ev.type = e.event;
      ev.message = std::string(e.message, strnlen(e.message, amdsmi::kEventMessageSize));
      ev.unix_s = now;
      bool found = false;
      for (size_t i = 0; i < handles.size() && !found; ++i)
        if (handles[i] && handles[i] == e.processor_handle) {
          ev.gpu = static_cast<unsigned>(i);
          found = true;
        }
      if (!found) {
        problem("an event for a processor handle that is no registered GPU: ignored");
        continue;
      }
      {
        std::lock_guard lock(mu_);
        ++stats_.events;
      }
      try {
        callback_(ev);
      } catch (const std::exception& ex) {
        options_.log->error("amdsmi events: the event handler failed: {}", ex.what());
      }
    }
  }
  for (auto h : handles)
    if (h) a.StopGpuEventNotification(h);
  std::lock_guard lock(mu_);
  stats_.running = false;
}

}  // namespace gcm::agent
