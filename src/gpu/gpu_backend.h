// One vendor's GPU library under the sampler: NVML (nvml_backend.h) or AMD's amdsmi (amdsmi_backend.h). The
// sampler (gpu_sampler.h) owns the threads, the timeouts and the GPU states; a backend only says how to count the
// GPUs and how to read one of them into a GpuSample, every call marked on the CallWatch so that the sampler can
// name a hung one. A value the vendor does not have stays empty in the sample (a record shows null, never 0).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/device_worker.h"
#include "gpu/gpu_sample.h"

namespace gcm {

enum class GpuState {
  Ok,             // sampled (individual values may still be null)
  NotResponding,  // a call timed out this round, or the worker is still stuck in an earlier one
  Lost,           // the library says the GPU is gone (NVML GPU_IS_LOST), or not responding for several rounds
  Error,          // no handle for this index
};
const char* to_string(GpuState s);

struct SampleScope {
  bool static_info = true;  // name, UUID, serial, PCI, VBIOS (they do not change; the sampler asks once)
  bool extended = true;     // everything beyond the reference's DeviceMetrics
};

// What a backend's probe found: the GPU count and the driver version ("" when the library does not say).
struct GpuProbe {
  bool ok = false;
  unsigned count = 0;
  std::string driver_version;
  std::string error;  // why the count could not be read, when !ok
};

// What one job of one GPU produced; `handle` is the backend's device handle, kept by the sampler between samples
// (nullptr: ask for it again, as after a GPU reset).
struct GpuJobResult {
  void* handle = nullptr;
  GpuState state = GpuState::Ok;  // Lost or Error when the GPU did not answer
  std::string detail;
  GpuSample sample;
};

class GpuBackend {
 public:
  virtual ~GpuBackend() = default;
  // "nvidia" or "amd": the `vendor` field of the records.
  virtual const char* vendor() const = 0;
  // "NVML" or "amdsmi": for messages.
  virtual const char* library_name() const = 0;
  virtual const std::string& library_path() const = 0;
  // Entry points the loaded library does not export (they read as not supported).
  virtual const std::vector<std::string>& missing_symbols() const = 0;
  // Counts the GPUs; runs on a worker thread under the call timeout.
  virtual void probe(CallWatch& watch, GpuProbe& out) = 0;
  // Throws the backend's UnavailableError (NvmlUnavailable, AmdsmiUnavailable) with `what`.
  [[noreturn]] virtual void unavailable(const std::string& what) const = 0;
  // Per-GPU state kept between samples (NVML: the GPM buffers); null when the backend needs none. The sampler
  // shares it with every job, so a job that outlives its timeout still has it.
  virtual std::shared_ptr<void> new_device_state(unsigned index, bool extended) = 0;
  // Reads GPU `index` into out.sample: looks its handle up when out.handle is null; on a lost GPU or a failed look
  // up sets *out.state (Lost or Error) and out.detail, keeping the identity read before the loss in out.sample.
  virtual void sample(unsigned index, CallWatch& watch, const SampleScope& scope, void* device_state,
                      GpuJobResult& out) = 0;
};

}  // namespace gcm
