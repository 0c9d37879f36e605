#include "gpu/nvml_backend.h"

#include <cstring>

#include <fmt/format.h>

#include "gpu/gpm_sampler.h"
#include "gpu/sample_device.h"

namespace gcm {

void NvmlBackend::probe(CallWatch& w, GpuProbe& out) {
  const nvml::Api& a = lib_->api();
  w.begin("nvmlDeviceGetCount_v2");
  nvml::Return rc = a.DeviceGetCount(&out.count);
  w.end();
  if (rc != nvml::SUCCESS) {
    out.error = fmt::format("nvmlDeviceGetCount_v2 failed: {}", lib_->error_string(rc));
    return;
  }
  if (a.SystemGetDriverVersion) {
    char buf[nvml::kDriverVersionBuffer] = {};
    w.begin("nvmlSystemGetDriverVersion");
    if (a.SystemGetDriverVersion(buf, sizeof(buf)) == nvml::SUCCESS)
      out.driver_version = std::string(buf, strnlen(buf, sizeof(buf)));
    w.end();
  }
  out.ok = true;
}

void NvmlBackend::unavailable(const std::string& what) const { throw NvmlUnavailable(what); }

std::shared_ptr<void> NvmlBackend::new_device_state(unsigned, bool extended) {
  if (!extended) return nullptr;
  return std::make_shared<GpmState>(lib_);
}

void NvmlBackend::sample(unsigned index, CallWatch& w, const SampleScope& scope, void* device_state,
                         GpuJobResult& out) {
  const nvml::Api& a = lib_->api();
  auto handle = static_cast<nvml::Device>(out.handle);
  if (!handle) {
    w.begin("nvmlDeviceGetHandleByIndex_v2");
    nvml::Return rc = a.DeviceGetHandleByIndex(index, &handle);
    w.end();
    if (rc != nvml::SUCCESS) {
      out.handle = nullptr;
      out.state = rc == nvml::ERROR_GPU_IS_LOST ? GpuState::Lost : GpuState::Error;
      out.detail = fmt::format("nvmlDeviceGetHandleByIndex_v2({}): {}", index, lib_->error_string(rc));
      return;
    }
    out.handle = handle;
  }
  try {
    sample_device(*lib_, handle, w, scope, out.sample, static_cast<GpmState*>(device_state));
  } catch (const GpuLost& e) {
    out.state = GpuState::Lost;
    out.detail = e.what();
    // No measurement of a lost GPU, but the identity read before the loss (the first sample reads it first) is
    // kept: the kernel log's XIDs of this GPU are attributed by its address.
    GpuSample identity;
    copy_identity(out.sample, identity);
    out.sample = std::move(identity);
  }
}

}  // namespace gcm
