#include "gpu/gpm_sampler.h"

#include <string>
#include <utility>

namespace gcm {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// What the project asks GPM for, and where each answer goes (NVML's percent becomes a ratio, MiB/s bytes/s).
struct Wanted {
  nvml::GpmMetricId id;
  std::optional<double> GpuSample::*field;
  double scale;
};
constexpr Wanted kWanted[] = {
    {nvml::GPM_GRAPHICS_UTIL, &GpuSample::gpm_graphics_activity, 0.01},
    {nvml::GPM_SM_UTIL, &GpuSample::gpm_sm_activity, 0.01},
    {nvml::GPM_SM_OCCUPANCY, &GpuSample::gpm_sm_occupancy, 0.01},
    {nvml::GPM_ANY_TENSOR_UTIL, &GpuSample::gpm_tensor_activity, 0.01},
    {nvml::GPM_DRAM_BW_UTIL, &GpuSample::gpm_dram_activity, 0.01},
    {nvml::GPM_PCIE_TX_PER_SEC, &GpuSample::gpm_pcie_tx_bytes_per_second, kMiB},
    {nvml::GPM_PCIE_RX_PER_SEC, &GpuSample::gpm_pcie_rx_bytes_per_second, kMiB},
    {nvml::GPM_NVLINK_TOTAL_TX_PER_SEC, &GpuSample::gpm_nvlink_tx_bytes_per_second, kMiB},
    {nvml::GPM_NVLINK_TOTAL_RX_PER_SEC, &GpuSample::gpm_nvlink_rx_bytes_per_second, kMiB},
};

}  // namespace

GpmState::~GpmState() {
  // Only the last owner gets here, when no job can use the buffers any more. Freeing a sample buffer is host
  // memory only; it does not wait on the GPU.
  const nvml::Api& a = lib_->api();
  if (prev_) a.GpmSampleFree(prev_);
  if (cur_) a.GpmSampleFree(cur_);
}

void GpmState::sample(Caller& c, nvml::Device device, GpuSample& out) {
  std::unique_lock<std::mutex> lk(m_, std::try_to_lock);
  if (!lk.owns_lock()) return;
  const nvml::Api& a = lib_->api();
  if (device != device_) {
    device_ = device;
    support_ = Support::Unknown;
    have_prev_ = false;
  }
  if (support_ == Support::No) return;
  if (support_ == Support::Unknown) {
    nvml::GpmSupport s{};
    s.version = nvml::kGpmSupportVersion;
    nvml::Return rc = c.call_raw("nvmlGpmQueryDeviceSupport", a.GpmQueryDeviceSupport, device, &s);
    if (rc == nvml::ERROR_NOT_SUPPORTED || rc == nvml::ERROR_FUNCTION_NOT_FOUND ||
        (rc == nvml::SUCCESS && !s.is_supported_device)) {
      support_ = Support::No;
      return;
    }
    if (!c.check("nvmlGpmQueryDeviceSupport", rc)) return;  // another error: asked again next sample
    support_ = Support::Yes;
  }
  for (nvml::GpmSample* buf : {&prev_, &cur_})
    if (!*buf && !c.call("nvmlGpmSampleAlloc", a.GpmSampleAlloc, buf)) {
      *buf = nullptr;
      return;
    }
  // Cleared first: if the call below fails or throws, cur_ holds nothing usable and prev_ is overwritten next.
  bool had_prev = std::exchange(have_prev_, false);
  if (!c.call("nvmlGpmSampleGet", a.GpmSampleGet, device, cur_)) return;
  if (had_prev) compute(c, out);
  std::swap(prev_, cur_);
  have_prev_ = true;
}

void GpmState::compute(Caller& c, GpuSample& out) {
  nvml::GpmMetricsGet get{};
  get.version = nvml::kGpmMetricsGetVersion;
  get.num_metrics = static_cast<unsigned>(std::size(kWanted));
  get.sample1 = prev_;
  get.sample2 = cur_;
  for (unsigned i = 0; i < get.num_metrics; ++i) get.metrics[i].metric_id = kWanted[i].id;
  if (!c.call("nvmlGpmMetricsGet", lib_->api().GpmMetricsGet, &get)) return;
  for (unsigned i = 0; i < get.num_metrics; ++i) {
    const nvml::GpmMetric& m = get.metrics[i];
    if (m.nvml_return == nvml::SUCCESS) {
      out.*(kWanted[i].field) = m.value * kWanted[i].scale;
    } else {
      std::string what = fmt::format("nvmlGpmMetricsGet metric {}", static_cast<unsigned>(kWanted[i].id));
      c.check(what.c_str(), m.nvml_return);
    }
  }
}

}  // namespace gcm
