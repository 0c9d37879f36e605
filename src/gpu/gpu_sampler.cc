#include "gpu/gpu_sampler.h"

#include <cstring>

#include <fmt/format.h>

#include "gpu/device_worker.h"
#include "gpu/nvml_backend.h"

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

void copy_identity(const GpuSample& from, GpuSample& to) {
  to.name = from.name;
  to.uuid = from.uuid;
  to.serial = from.serial;
  to.pci_bus_id = from.pci_bus_id;
  to.vbios_version = from.vbios_version;
  to.minor_number = from.minor_number;
  to.compute_partition = from.compute_partition;
  to.memory_partition = from.memory_partition;
}

struct GpuSampler::Slot {
  unsigned index = 0;
  std::unique_ptr<DeviceWorker> worker;
  // The backend's per-GPU state, shared with the jobs: a job that timed out and still runs keeps it alive.
  std::shared_ptr<void> state;
  void* handle = nullptr;
  bool have_static = false;
  GpuSample static_info;
  int consecutive_timeouts = 0;
  std::string last_hung_call;
};

GpuSampler::GpuSampler(std::shared_ptr<NvmlLibrary> lib, GpuSamplerOptions opts)
    : GpuSampler(std::make_shared<NvmlBackend>(std::move(lib)), opts) {}

GpuSampler::GpuSampler(std::shared_ptr<GpuBackend> backend, GpuSamplerOptions opts)
    : backend_(std::move(backend)), opts_(opts) {
  // Even the count goes through a worker: a wedged driver can hang it too.
  auto out = std::make_shared<GpuProbe>();
  DeviceWorker probe(fmt::format("gcm-{}-probe", backend_->vendor()));
  probe.start([out, b = backend_](CallWatch& w) { b->probe(w, *out); });
  std::string hung;
  if (probe.wait(opts_.call_timeout, &hung) == DeviceWorker::Outcome::CallTimedOut)
    backend_->unavailable(fmt::format("{} did not return within {} ms", hung, opts_.call_timeout.count()));
  if (!out->ok) backend_->unavailable(out->error);
  driver_version_ = out->driver_version;
  for (unsigned i = 0; i < out->count; ++i) {
    auto s = std::make_unique<Slot>();
    s->index = i;
    s->worker = std::make_unique<DeviceWorker>(fmt::format("gcm-gpu{}", i));
    s->state = backend_->new_device_state(i, opts_.extended);
    slots_.push_back(std::move(s));
  }
}

GpuSampler::~GpuSampler() = default;

std::vector<DeviceResult> GpuSampler::sample() {
  std::vector<DeviceResult> results(slots_.size());
  std::vector<std::shared_ptr<GpuJobResult>> outs(slots_.size());
  std::vector<bool> started(slots_.size(), false);

  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = *slots_[i];
    // Written by the job on its worker thread; read here only after the job finished. Owned jointly so that a job
    // that finishes after the sampler gave up on it writes into memory that is still alive.
    auto out = std::make_shared<GpuJobResult>();
    out->handle = s.handle;
    outs[i] = out;
    SampleScope scope;
    scope.static_info = !s.have_static;
    scope.extended = opts_.extended;
    unsigned index = s.index;
    started[i] = s.worker->start([out, b = backend_, index, scope, state = s.state](CallWatch& w) {
      b->sample(index, w, scope, state.get(), *out);
    });
  }

  // One deadline for the whole round: the workers run in parallel, so every GPU gets the same budget.
  auto deadline = std::chrono::steady_clock::now() + opts_.call_timeout * opts_.sample_budget_in_call_timeouts;
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = *slots_[i];
    DeviceResult& r = results[i];
    r.index = s.index;
    r.vendor = backend_->vendor();
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
            "the sample did not finish within {} ms (slow {} calls; now in {}) ({} sample(s) in "
            "a row)",
            (opts_.call_timeout * opts_.sample_budget_in_call_timeouts).count(), backend_->library_name(), hung.empty() ? "no call" : hung,
            s.consecutive_timeouts);
      else
        r.detail = fmt::format("{} did not return within {} ms ({} sample(s) in a row)", hung,
                               opts_.call_timeout.count(), s.consecutive_timeouts);
      if (s.have_static) copy_identity(s.static_info, r.sample);  // identity only, no measurement
      continue;
    }
    s.consecutive_timeouts = 0;
    GpuJobResult& out = *outs[i];
    r.state = out.state;
    r.detail = std::move(out.detail);
    if (out.state == GpuState::Lost || out.state == GpuState::Error) {
      s.handle = nullptr;  // ask again next time: a GPU that comes back after a reset gets a new handle
      if (!s.have_static && out.sample.uuid) {
        s.static_info = out.sample;
        s.have_static = true;
      }
      if (s.have_static) copy_identity(s.static_info, r.sample);  // identity only, no measurement
      continue;
    }
    s.handle = out.handle;
    r.sample = std::move(out.sample);
    if (!s.have_static && r.sample.uuid) {
      s.static_info = r.sample;
      s.have_static = true;
    } else if (s.have_static) {
      copy_identity(s.static_info, r.sample);
    }
  }
  return results;
}

}  // namespace gcm
