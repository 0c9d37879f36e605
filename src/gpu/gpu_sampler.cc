#include "gpu/gpu_sampler.h"

#include <cstring>

#include <fmt/format.h>

#include "gpu/device_worker.h"
#include "gpu/sample_device.h"

namespace gcm {

const char* to_string(GpuState s) {
  switch (s) {
    case GpuState::Ok:
      return "ok";
    case GpuState::NotResponding:
      return "not_responding";
    case GpuState::Lost:
      return "lost";
    case GpuState::Error:
      return "error";
  }
  return "?";
}

namespace {

// Written by a job on its worker thread; read by the sampler only after the job finished. Owned jointly so that a
// job that finishes after the sampler gave up on it writes into memory that is still alive.
struct JobOut {
  nvml::Device handle = nullptr;
  GpuState state = GpuState::Ok;
  std::string detail;
  GpuSample sample;
};

void copy_static(const GpuSample& from, GpuSample& to) {
  to.name = from.name;
  to.uuid = from.uuid;
  to.serial = from.serial;
  to.pci_bus_id = from.pci_bus_id;
  to.vbios_version = from.vbios_version;
  to.minor_number = from.minor_number;
}

}  // namespace

struct GpuSampler::Slot {
  unsigned index = 0;
  std::unique_ptr<DeviceWorker> worker;
  // Shared with the jobs: a job that timed out and still runs keeps it (and its GPM buffers) alive (gpm_sampler.h).
  std::shared_ptr<GpmState> gpm;
  nvml::Device handle = nullptr;
  bool have_static = false;
  GpuSample static_info;
  int consecutive_timeouts = 0;
  std::string last_hung_call;
};

GpuSampler::GpuSampler(std::shared_ptr<NvmlLibrary> lib, GpuSamplerOptions opts) : lib_(std::move(lib)), opts_(opts) {
  // Even the count goes through a worker: a wedged driver can hang it too.
  auto out = std::make_shared<std::pair<nvml::Return, unsigned>>(nvml::ERROR_UNKNOWN, 0);
  auto driver = std::make_shared<std::string>();
  DeviceWorker probe("gcm-nvml-probe");
  probe.start([out, driver, lib = lib_](CallWatch& w) {
    const nvml::Api& a = lib->api();
    w.begin("nvmlDeviceGetCount_v2");
    out->first = a.DeviceGetCount(&out->second);
    w.end();
    if (a.SystemGetDriverVersion) {
      char buf[nvml::kDriverVersionBuffer] = {};
      w.begin("nvmlSystemGetDriverVersion");
      if (a.SystemGetDriverVersion(buf, sizeof(buf)) == nvml::SUCCESS)
        *driver = std::string(buf, strnlen(buf, sizeof(buf)));
      w.end();
    }
  });
  std::string hung;
  if (probe.wait(opts_.call_timeout, &hung) == DeviceWorker::Outcome::CallTimedOut)
    throw NvmlUnavailable(fmt::format("{} did not return within {} ms", hung, opts_.call_timeout.count()));
  if (out->first != nvml::SUCCESS)
    throw NvmlUnavailable(fmt::format("nvmlDeviceGetCount_v2 failed: {}", lib_->error_string(out->first)));
  driver_version_ = *driver;
  for (unsigned i = 0; i < out->second; ++i) {
    auto s = std::make_unique<Slot>();
    s->index = i;
    s->worker = std::make_unique<DeviceWorker>(fmt::format("gcm-gpu{}", i));
    if (opts_.extended) s->gpm = std::make_shared<GpmState>(lib_);
    slots_.push_back(std::move(s));
  }
}

GpuSampler::~GpuSampler() = default;

std::vector<DeviceResult> GpuSampler::sample() {
  std::vector<DeviceResult> results(slots_.size());
  std::vector<std::shared_ptr<JobOut>> outs(slots_.size());
  std::vector<bool> started(slots_.size(), false);
  const nvml::Api& a = lib_->api();

  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = *slots_[i];
    auto out = std::make_shared<JobOut>();
    outs[i] = out;
    SampleScope scope;
    scope.static_info = !s.have_static;
    scope.extended = opts_.extended;
    std::shared_ptr<NvmlLibrary> lib = lib_;
    unsigned index = s.index;
    nvml::Device handle = s.handle;
    std::shared_ptr<GpmState> gpm = s.gpm;
    started[i] = s.worker->start([out, lib, index, handle, scope, gpm, &a](CallWatch& w) {
      out->handle = handle;
      if (!out->handle) {
        w.begin("nvmlDeviceGetHandleByIndex_v2");
        nvml::Return rc = a.DeviceGetHandleByIndex(index, &out->handle);
        w.end();
        if (rc != nvml::SUCCESS) {
          out->handle = nullptr;
          out->state = rc == nvml::ERROR_GPU_IS_LOST ? GpuState::Lost : GpuState::Error;
          out->detail = fmt::format("nvmlDeviceGetHandleByIndex_v2({}): {}", index, lib->error_string(rc));
          return;
        }
      }
      try {
        sample_device(*lib, out->handle, w, scope, out->sample, gpm.get());
      } catch (const GpuLost& e) {
        out->state = GpuState::Lost;
        out->detail = e.what();
        // No measurement of a lost GPU, but the identity read before the loss (the first sample reads it first)
        // is kept: the kernel log's XIDs of this GPU are attributed by its address.
        GpuSample identity;
        copy_static(out->sample, identity);
        out->sample = std::move(identity);
      }
    });
  }

  // One deadline for the whole round: the workers run in parallel, so every GPU gets the same budget.
  auto deadline = std::chrono::steady_clock::now() + opts_.call_timeout * opts_.sample_budget_in_call_timeouts;
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = *slots_[i];
    DeviceResult& r = results[i];
    r.index = s.index;
    bool timed_out = false, over_budget = false;
    std::string hung;
    if (!started[i]) {
      timed_out = true;
      hung = s.last_hung_call;
    } else {
      auto outcome = s.worker->wait(opts_.call_timeout, &hung, deadline);
      over_budget = outcome == DeviceWorker::Outcome::JobTimedOut;
      if (outcome != DeviceWorker::Outcome::Finished) {
        timed_out = true;
        s.last_hung_call = hung;
      }
    }
    if (timed_out) {
      ++s.consecutive_timeouts;
      r.state = s.consecutive_timeouts >= opts_.lost_after_timeouts ? GpuState::Lost : GpuState::NotResponding;
      if (over_budget)
        r.detail = fmt::format(
            "the sample did not finish within {} ms (slow NVML calls; now in {}) ({} sample(s) in "
            "a row)",
            (opts_.call_timeout * opts_.sample_budget_in_call_timeouts).count(), hung.empty() ? "no call" : hung,
            s.consecutive_timeouts);
      else
        r.detail = fmt::format("{} did not return within {} ms ({} sample(s) in a row)", hung,
                               opts_.call_timeout.count(), s.consecutive_timeouts);
      if (s.have_static) copy_static(s.static_info, r.sample);  // identity only, no measurement
      continue;
    }
    s.consecutive_timeouts = 0;
    JobOut& out = *outs[i];
    r.state = out.state;
    r.detail = std::move(out.detail);
    if (out.state == GpuState::Lost || out.state == GpuState::Error) {
      s.handle = nullptr;  // ask again next time: a GPU that comes back after a reset gets a new handle
      if (!s.have_static && out.sample.uuid) {
        s.static_info = out.sample;
        s.have_static = true;
      }
      if (s.have_static) copy_static(s.static_info, r.sample);  // identity only, no measurement
      continue;
    }
    s.handle = out.handle;
    r.sample = std::move(out.sample);
    if (!s.have_static && r.sample.uuid) {
      s.static_info = r.sample;
      s.have_static = true;
    } else if (s.have_static) {
      copy_static(s.static_info, r.sample);
    }
  }
  return results;
}

}  // namespace gcm
