#include "agent/nvml_events.h"
#include "core/clock.h"

#include <fmt/format.h>

#include "gpu/device_worker.h"

namespace gcm::agent {

namespace {

std::string describe(const nvml::Api& api, nvml::Return r) {
  const char* s = api.ErrorString ? api.ErrorString(r) : nullptr;
  if (s && *s) return s;
  const char* name = nvml::return_code_name(r);
  return *name ? name : fmt::format("NVML error {}", r);
}

}  // namespace

NvmlEventWatcher::NvmlEventWatcher(const nvml::Api& api, Callback callback, NvmlEventWatcherOptions options)
    : api_(api), callback_(std::move(callback)), options_(std::move(options)) {
  if (!options_.log) options_.log = spdlog::default_logger();
}

NvmlEventWatcher::~NvmlEventWatcher() { stop(); }

void NvmlEventWatcher::start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

void NvmlEventWatcher::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

NvmlEventWatcherStats NvmlEventWatcher::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void NvmlEventWatcher::problem(const std::string& what) {
  {
    std::lock_guard lock(mu_);
    for (const auto& p : stats_.problems)
      if (p == what) return;
    stats_.problems.push_back(what);
  }
  options_.log->warn("NVML XID events: {}", what);
}

void NvmlEventWatcher::pause() {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, options_.wait_timeout, [this] { return stopping_.load(); });
}

bool NvmlEventWatcher::register_gpus(nvml::EventSet* set, std::vector<nvml::Device>* handles) {
  if (!api_.EventSetCreate || !api_.DeviceRegisterEvents || !api_.EventSetWait || !api_.EventSetFree ||
      !api_.DeviceGetCount || !api_.DeviceGetHandleByIndex) {
    problem(
        "the NVML library lacks the event API (nvmlEventSetCreate, nvmlDeviceRegisterEvents, "
        "nvmlEventSetWait_v2, nvmlEventSetFree): XIDs come from the kernel log only");
    return false;
  }
  unsigned count = 0;
  if (nvml::Return r = api_.DeviceGetCount(&count); r != nvml::SUCCESS) {
    problem(fmt::format("counting GPUs: {}", describe(api_, r)));
    return false;
  }
  if (nvml::Return r = api_.EventSetCreate(set); r != nvml::SUCCESS) {
    problem(fmt::format("creating an event set: {}", describe(api_, r)));
    return false;
  }
  auto worker = std::make_unique<DeviceWorker>("gcm-nvml-events");
  for (unsigned i = 0; i < count && !stopping_; ++i) {
    // Owned by the job: one that times out may still write here later.
    struct Out {
      nvml::Device d = nullptr;
      nvml::Return r = nvml::ERROR_UNKNOWN;
    };
    auto out = std::make_shared<Out>();
    auto get_handle = api_.DeviceGetHandleByIndex;
    auto register_events = api_.DeviceRegisterEvents;
    nvml::EventSet s = *set;
    std::string hung;
    bool finished = worker->start([out, get_handle, register_events, s, i](CallWatch& w) {
      w.begin("nvmlDeviceGetHandleByIndex_v2");
      out->r = get_handle(i, &out->d);
      w.end();
      if (out->r != nvml::SUCCESS) return;
      w.begin("nvmlDeviceRegisterEvents");
      out->r = register_events(out->d, nvml::kEventTypeXidCriticalError, s);
      w.end();
    }) && worker->wait(options_.call_timeout, &hung, std::chrono::steady_clock::now() + 2 * options_.call_timeout) ==
                    DeviceWorker::Outcome::Finished;
    nvml::Device d = nullptr;
    if (!finished) {
      problem(fmt::format("GPU {}: registering for XID events: {} did not return within {} ms; the GPU is not watched",
                          i, hung.empty() ? "the registration" : hung, options_.call_timeout.count()));
      abandoned_ = true;
      worker = std::make_unique<DeviceWorker>("gcm-nvml-events");  // the stuck one is detached when destroyed
    } else if (out->r != nvml::SUCCESS) {
      problem(fmt::format("GPU {}: registering for XID events: {}", i, describe(api_, out->r)));
    } else {
      d = out->d;
    }
    handles->push_back(d);  // a failed GPU is kept as a hole: the index of a handle is its GPU
  }
  unsigned registered = 0;
  for (auto d : *handles) registered += d != nullptr;
  {
    std::lock_guard lock(mu_);
    stats_.gpus_registered = registered;
  }
  if (registered == 0) {
    if (count == 0) problem("NVML lists no GPU");
    if (!abandoned_) api_.EventSetFree(*set);
    return false;
  }
  return true;
}

void NvmlEventWatcher::run() {
  nvml::EventSet set = nullptr;
  std::vector<nvml::Device> handles;
  if (!register_gpus(&set, &handles)) {
    std::lock_guard lock(mu_);
    stats_.supported = false;
    return;
  }
  {
    std::lock_guard lock(mu_);
    stats_.running = true;
  }
  auto ms = static_cast<unsigned>(std::max<int64_t>(1, options_.wait_timeout.count()));
  while (!stopping_) {
    nvml::EventData ev{};
    nvml::Return r = api_.EventSetWait(set, &ev, ms);
    if (r == nvml::ERROR_TIMEOUT) continue;
    if (r != nvml::SUCCESS) {
      {
        std::lock_guard lock(mu_);
        ++stats_.wait_errors;
      }
      problem(fmt::format("waiting for events: {}", describe(api_, r)));
      pause();
      continue;
    }
    if (!(ev.event_type & nvml::kEventTypeXidCriticalError)) continue;
    NvmlXid x;
    x.xid = ev.event_data;
    x.unix_s = unix_seconds_now();
    bool found = false;
    for (size_t i = 0; i < handles.size() && !found; ++i)
      if (handles[i] && handles[i] == ev.device) {
        x.gpu = static_cast<unsigned>(i);
        found = true;
      }
    if (!found) {
      problem("an XID event for a device handle that is no registered GPU (a MIG device?): ignored");
      continue;
    }
    {
      std::lock_guard lock(mu_);
      ++stats_.events;
    }
    try {
      callback_(x);
    } catch (const std::exception& e) {
      options_.log->error("NVML XID events: the event handler failed: {}", e.what());
    }
  }
  if (!abandoned_) api_.EventSetFree(set);
  std::lock_guard lock(mu_);
  stats_.running = false;
}

}  // namespace gcm::agent
