#include "gpu/amdsmi_backend.h"

#include <cstring>

#include <fmt/format.h>

#include "gpu/amdsmi_sample_device.h"

namespace gcm {
namespace {

struct AmdDeviceState {
  bool probed_handle_used = false;
};

}  // namespace

bool enumerate_amd_gpus(const AmdsmiLibrary& lib, CallWatch& w, std::vector<amdsmi::ProcessorHandle>& out,
                        std::string* error, int64_t* calls) {
  const amdsmi::Api& a = lib.api();
  auto counted = [&](const char* name, auto&& fn) {
    w.begin(name);
    amdsmi::Status rc = fn();
    w.end();
    if (calls) ++*calls;
    return rc;
  };
  uint32_t sockets = 0;
  amdsmi::Status rc = counted("amdsmi_get_socket_handles", [&] { return a.GetSocketHandles(&sockets, nullptr); });
  if (rc != amdsmi::STATUS_SUCCESS) {
    *error = fmt::format("amdsmi_get_socket_handles failed: {}", lib.error_string(rc));
    return false;
  }
  std::vector<amdsmi::SocketHandle> socket_handles(sockets);
  if (sockets > 0) {
    rc = counted("amdsmi_get_socket_handles", [&] { return a.GetSocketHandles(&sockets, socket_handles.data()); });
    if (rc != amdsmi::STATUS_SUCCESS) {
      *error = fmt::format("amdsmi_get_socket_handles failed: {}", lib.error_string(rc));
      return false;
    }
    socket_handles.resize(std::min<size_t>(sockets, socket_handles.size()));
  }
  out.clear();
  for (auto s : socket_handles) {
    uint32_t n = 0;
    rc = counted("amdsmi_get_processor_handles", [&] { return a.GetProcessorHandles(s, &n, nullptr); });
    if (rc == amdsmi::STATUS_SUCCESS && n > 0) {
      std::vector<amdsmi::ProcessorHandle> p(n);
      rc = counted("amdsmi_get_processor_handles", [&] { return a.GetProcessorHandles(s, &n, p.data()); });
      p.resize(std::min<size_t>(n, p.size()));
      if (rc == amdsmi::STATUS_SUCCESS) out.insert(out.end(), p.begin(), p.end());
    }
    if (rc != amdsmi::STATUS_SUCCESS) {
      *error = fmt::format("amdsmi_get_processor_handles failed: {}", lib.error_string(rc));
      return false;
    }
  }
  return true;
}

void AmdsmiBackend::probe(CallWatch& w, GpuProbe& out) {
  std::vector<amdsmi::ProcessorHandle> gpus;
  if (!enumerate_amd_gpus(*lib_, w, gpus, &out.error)) return;
  out.count = static_cast<unsigned>(gpus.size());
  if (!gpus.empty()) {
    // amdsmi_driver_info_t begins with driver_version (amdsmi_api.h): the amdgpu driver's, the same for every GPU.
    std::vector<char> buf(amdsmi::kStructSlack, '\0');
    w.begin("amdsmi_get_gpu_driver_info");
    amdsmi::Status rc = lib_->api().GetGpuDriverInfo(gpus[0], buf.data());
    w.end();
    if (rc == amdsmi::STATUS_SUCCESS)
      out.driver_version = std::string(buf.data(), strnlen(buf.data(), amdsmi::kStringLength));
  }
  {
    std::lock_guard<std::mutex> lk(m_);
    probed_ = std::move(gpus);
  }
  out.ok = true;
}

void AmdsmiBackend::unavailable(const std::string& what) const { throw AmdsmiUnavailable(what); }

std::shared_ptr<void> AmdsmiBackend::new_device_state(unsigned, bool) { return std::make_shared<AmdDeviceState>(); }

void AmdsmiBackend::sample(unsigned index, CallWatch& w, const SampleScope& scope, void* device_state,
                           GpuJobResult& out) {
  auto handle = static_cast<amdsmi::ProcessorHandle>(out.handle);
  if (!handle) {
    auto* st = static_cast<AmdDeviceState*>(device_state);
    std::vector<amdsmi::ProcessorHandle> gpus;
    std::string error;
    if (st && !st->probed_handle_used) {
      st->probed_handle_used = true;
      std::lock_guard<std::mutex> lk(m_);
      gpus = probed_;
    } else if (!enumerate_amd_gpus(*lib_, w, gpus, &error, &out.sample.nvml_calls)) {
      out.state = GpuState::Error;
      out.detail = error;
      return;
    }
    if (index >= gpus.size()) {
      out.state = GpuState::Lost;  // fewer GPUs than at start: this one has gone
      out.detail = fmt::format("amdsmi_get_processor_handles: GPU {} is gone ({} GPU(s) now)", index, gpus.size());
      return;
    }
    handle = gpus[index];
    out.handle = handle;
  }
  sample_amd_gpu(*lib_, handle, w, scope, out.sample);
}

}  // namespace gcm
