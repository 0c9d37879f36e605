// NVIDIA GPUs through NVML: the GpuBackend over nvml_library.h and sample_device.h.
#pragma once

#include <memory>

#include "gpu/gpu_backend.h"
#include "gpu/nvml_library.h"

namespace gcm {

class NvmlBackend : public GpuBackend {
 public:
  explicit NvmlBackend(std::shared_ptr<NvmlLibrary> lib) : lib_(std::move(lib)) {}
  const char* vendor() const override { return "nvidia"; }
  const char* library_name() const override { return "NVML"; }
  const std::string& library_path() const override { return lib_->path(); }
  const std::vector<std::string>& missing_symbols() const override { return lib_->missing_symbols(); }
  void probe(CallWatch& watch, GpuProbe& out) override;
  [[noreturn]] void unavailable(const std::string& what) const override;
  // The GPU's GPM state (extended scope only).
  std::shared_ptr<void> new_device_state(unsigned index, bool extended) override;
  void sample(unsigned index, CallWatch& watch, const SampleScope& scope, void* device_state,
              GpuJobResult& out) override;
  const std::shared_ptr<NvmlLibrary>& library() const { return lib_; }

 private:
  std::shared_ptr<NvmlLibrary> lib_;
};

}  // namespace gcm
