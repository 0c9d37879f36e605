// NVML GPM (GPU performance monitoring, Hopper and later): SM activity and occupancy, tensor-core and DRAM
// activity, PCIe and NVLink bandwidth, the profiling view dcgm-exporter otherwise needs DCGM for. GPM metrics are
// computed between two samples taken by the driver, so each GPU keeps its previous sample here and every sample of
// the GPU yields the metrics over the interval since the last one (the first yields nothing).
#pragma once

#include <memory>
#include <mutex>

#include "gpu/gpu_sample.h"
#include "gpu/nvml_caller.h"
#include "gpu/nvml_library.h"

namespace gcm {

// The GPM state of one GPU: whether it supports GPM (asked once per device handle) and the two sample buffers,
// allocated on first use and freed on destruction.
//
// Thread safety with the per-GPU workers: the state is held by a shared_ptr that the sampler's slot and every job
// it starts capture, so a job that timed out and still runs keeps the state (and its buffers) alive, and the
// buffers are freed only when the last job that may use them has finished (never, if a call hangs for good: a
// leak, not a use after free). The worker runs one job at a time, so two jobs never use one state at once; the
// mutex (taken with try_lock, so a job never waits) only guards against a caller that shares a state between
// workers, and such a second job skips GPM for its sample.
class GpmState {
 public:
  explicit GpmState(std::shared_ptr<NvmlLibrary> lib) : lib_(std::move(lib)) {}
  ~GpmState();
  GpmState(const GpmState&) = delete;
  GpmState& operator=(const GpmState&) = delete;

  // Takes a GPM sample of `device` and, when an earlier one exists, fills out.gpm_* over the interval between
  // them. Unsupported devices and drivers without the GPM entry points leave the fields empty without an error.
  // GPU_IS_LOST throws GpuLost (through the Caller), and the next sample starts over.
  void sample(Caller& c, nvml::Device device, GpuSample& out);

 private:
  enum class Support { Unknown, Yes, No };
  void compute(Caller& c, GpuSample& out);

  std::shared_ptr<NvmlLibrary> lib_;
  std::mutex m_;
  nvml::Device device_ = nullptr;  // the handle support was asked for (a GPU reset gives a new one)
  Support support_ = Support::Unknown;
  nvml::GpmSample prev_ = nullptr, cur_ = nullptr;
  bool have_prev_ = false;  // prev_ holds a sample of device_
};

}  // namespace gcm
