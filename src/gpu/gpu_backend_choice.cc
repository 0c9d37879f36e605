#include "gpu/gpu_backend_choice.h"

#include <fmt/format.h>

#include "gpu/amdsmi_backend.h"
#include "gpu/nvml_backend.h"

namespace gcm {
namespace {

std::unique_ptr<GpuSampler> open_nvml_sampler(const GpuBackendChoice& c, GpuSamplerOptions opts) {
  auto lib = NvmlLibrary::open(nvml_library_path(c.nvml_library), c.call_timeout);
  return std::make_unique<GpuSampler>(std::make_shared<NvmlBackend>(lib), opts);
}

std::unique_ptr<GpuSampler> open_amdsmi_sampler(const GpuBackendChoice& c, GpuSamplerOptions opts) {
  auto lib = AmdsmiLibrary::open(amdsmi_library_path(c.amdsmi_library), c.call_timeout);
  return std::make_unique<GpuSampler>(std::make_shared<AmdsmiBackend>(lib), opts);
}

}  // namespace

const std::vector<std::string>& gpu_backend_names() {
  static const std::vector<std::string> names = {"nvml", "amdsmi", "auto"};
  return names;
}

std::unique_ptr<GpuSampler> open_gpu_sampler(const GpuBackendChoice& c, GpuSamplerOptions opts) {
  if (c.backend == "nvml") return open_nvml_sampler(c, opts);
  if (c.backend == "amdsmi") return open_amdsmi_sampler(c, opts);
  if (c.backend != "auto") throw std::invalid_argument(fmt::format("unknown GPU backend '{}'", c.backend));
  std::unique_ptr<GpuSampler> loaded;  // a library that loaded but found no GPU
  std::string nvml_error, amdsmi_error;
  try {
    loaded = open_nvml_sampler(c, opts);
    if (loaded->device_count() > 0) return loaded;
  } catch (const UnavailableError& e) {
    nvml_error = e.what();
  }
  try {
    auto amd = open_amdsmi_sampler(c, opts);
    if (amd->device_count() > 0 || !loaded) return amd;
  } catch (const UnavailableError& e) {
    amdsmi_error = e.what();
  }
  if (loaded) return loaded;
  throw UnavailableError("a GPU library", fmt::format("NVML: {}; amdsmi: {}", nvml_error, amdsmi_error));
}

}  // namespace gcm
