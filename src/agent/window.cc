#include "agent/window.h"

#include <algorithm>
#include <cmath>

#include "gpu/gpu_records.h"

namespace gcm::agent {

Aggregation window_aggregation(const FieldSpec& f) {
  if (f.role != FieldRole::Gauge) return Aggregation::Last;
  static const char* const kLevels[] = {"percent", "watts", "hertz", "celsius", "ratio"};
  for (const char* u : kLevels)
    if (f.unit == u) return Aggregation::Mean;
  if (f.name.find("_per_second") != std::string::npos) return Aggregation::Mean;
  return Aggregation::Last;
}

void GpuWindowAccumulator::Stat::add(double v) {
  if (n == 0) {
    min = max = v;
  } else {
    min = std::min(min, v);
    max = std::max(max, v);
  }
  sum += v;
  last = v;
  ++n;
}

std::optional<detector::FieldStats> GpuWindowAccumulator::Stat::stats() const {
  if (n == 0) return std::nullopt;
  return detector::FieldStats{min, max, sum / n, last, n};
}

void GpuWindowAccumulator::Delta::add(double v) {
  if (!first) first = v;
  if (prev && v >= *prev) increase += v - *prev;
  if (prev && v < *prev) increase += v;  // the counter was reset (driver reload): it counted v since
  prev = v;
}

std::optional<int64_t> GpuWindowAccumulator::Delta::value() const {
  if (!first) return std::nullopt;
  return static_cast<int64_t>(increase);
}

GpuWindowAccumulator::GpuWindowAccumulator(unsigned gpu) : gpu_(gpu) { reset(); }

void GpuWindowAccumulator::reset() {
  samples_ = answered_ = 0;
  last_ok_.reset();
  last_state_record_.reset();
  fields_.assign(kIndexedDeviceMetrics->fields.size(), Stat{});
  sm_clock_ = sm_clock_unthrottled_ = max_sm_clock_ = power_ = power_limit_ = gpu_util_ = mem_util_ = temperature_ = Stat{};
  gpm_sm_activity_ = gpm_sm_occupancy_ = gpm_tensor_activity_ = gpm_dram_activity_ = Stat{};
  hw_slowdown_ = hw_thermal_ = power_brake_ = sw_thermal_ = sw_power_cap_ = reasons_seen_ = 0;
  pcie_gen_ = pcie_width_ = pcie_gen_max_ = pcie_width_max_ = remap_pending_ = remap_failure_ = std::nullopt;
  nvlinks_active_.reset();
  pcie_replays_ = nvlink_crc_ = nvlink_replay_ = nvlink_recovery_ = ecc_uncorrected_ = Delta{};
}

namespace {

template <typename T>
void add_opt(auto& stat, const std::optional<T>& v, double scale = 1.0) {
  if (v) stat.add(static_cast<double>(*v) * scale);
}

// Clock event reason bits (nvmlClocksEventReasons): what the detector counts per window.
constexpr uint64_t kSwPowerCap = 0x4, kHwSlowdown = 0x8, kSwThermal = 0x20, kHwThermal = 0x40, kHwPowerBrake = 0x80;

}  // namespace

void GpuWindowAccumulator::add(const DeviceResult& r, const Record& metrics) {
  ++samples_;
  last_state_ = r.state;
  if (r.state != GpuState::Ok) {
    last_state_record_ = metrics;
    return;
  }
  ++answered_;
  last_ok_ = metrics;
  for (size_t i = 0; i < metrics.values.size() && i < fields_.size(); ++i)
    if (kIndexedDeviceMetrics->is_measurement(i) && metrics.values[i].is_number())
      fields_[i].add(metrics.values[i].as_number());

  const GpuSample& s = r.sample;
  // The clock the compute units run at: NVML's SM clock; AMD has none by that name, and its graphics (gfx) clock is
  // the one its compute units run at, so the detector judges an AMD GPU by that.
  const std::optional<int64_t>& compute_clock = s.clock_sm_mhz ? s.clock_sm_mhz : s.clock_graphics_mhz;
  const std::optional<int64_t>& max_compute_clock = s.max_clock_sm_mhz ? s.max_clock_sm_mhz : s.max_clock_graphics_mhz;
  add_opt(sm_clock_, compute_clock);
  add_opt(max_sm_clock_, max_compute_clock);
  add_opt(power_, s.power_draw_mw, 1e-3);
  add_opt(power_limit_, s.power_limit_mw, 1e-3);
  add_opt(gpu_util_, s.gpu_util);
  add_opt(mem_util_, s.mem_util);
  add_opt(temperature_, s.temperature);
  add_opt(gpm_sm_activity_, s.gpm_sm_activity);
  add_opt(gpm_sm_occupancy_, s.gpm_sm_occupancy);
  add_opt(gpm_tensor_activity_, s.gpm_tensor_activity);
  add_opt(gpm_dram_activity_, s.gpm_dram_activity);
  // The detector judges a window with a HW throttle by its other samples (detector/clock_signal.h).
  constexpr uint64_t kHwThrottle = kHwSlowdown | kHwThermal | kHwPowerBrake;
  if (!s.clock_event_reasons || (*s.clock_event_reasons & kHwThrottle) == 0) add_opt(sm_clock_unthrottled_, compute_clock);
  if (s.clock_event_reasons) {
    uint64_t m = *s.clock_event_reasons;
    ++reasons_seen_;
    hw_slowdown_ += (m & kHwSlowdown) != 0;
    hw_thermal_ += (m & kHwThermal) != 0;
    power_brake_ += (m & kHwPowerBrake) != 0;
    sw_thermal_ += (m & kSwThermal) != 0;
    sw_power_cap_ += (m & kSwPowerCap) != 0;
  }
  if (s.pcie_link_gen) pcie_gen_ = s.pcie_link_gen;
  if (s.pcie_link_width) pcie_width_ = s.pcie_link_width;
  if (s.pcie_link_gen_max) pcie_gen_max_ = s.pcie_link_gen_max;
  if (s.pcie_link_width_max) pcie_width_max_ = s.pcie_link_width_max;
  if (s.remapped_rows_pending) remap_pending_ = s.remapped_rows_pending;
  if (s.remapped_rows_failure) remap_failure_ = s.remapped_rows_failure;
  if (s.pcie_replay_count) pcie_replays_.add(static_cast<double>(*s.pcie_replay_count));
  if (s.ecc_volatile_uncorrected) ecc_uncorrected_.add(static_cast<double>(*s.ecc_volatile_uncorrected));
  if (!s.nvlinks.empty()) {
    nvlinks_active_ = std::count_if(s.nvlinks.begin(), s.nvlinks.end(), [](const auto& l) { return l.active; });
    double crc = 0, replay = 0, recovery = 0;
    bool has_crc = false, has_replay = false, has_recovery = false;
    for (const auto& l : s.nvlinks) {
      auto sum = [](double& total, bool& seen, const std::optional<uint64_t>& v) {
        if (!v) return;
        total += static_cast<double>(*v);
        seen = true;
      };
      sum(crc, has_crc, l.crc_flit_errors);
      sum(crc, has_crc, l.crc_data_errors);
      sum(replay, has_replay, l.replay_errors);
      sum(recovery, has_recovery, l.recovery_errors);
    }
    if (has_crc) nvlink_crc_.add(crc);
    if (has_replay) nvlink_replay_.add(replay);
    if (has_recovery) nvlink_recovery_.add(recovery);
  }
}

GpuWindowAccumulator::Closed GpuWindowAccumulator::close(int64_t end_unix_ms, double seconds, const std::string& job_id,
                                                         const std::string& uuid) {
  Closed c;
  detector::GpuWindow& w = c.summary;
  w.gpu = gpu_;
  w.uuid = uuid;
  w.end_unix_ms = end_unix_ms;
  w.seconds = seconds;
  w.samples = samples_;
  w.job_id = job_id;
  w.presence = last_state_ == GpuState::Ok      ? detector::Presence::Ok
               : last_state_ == GpuState::Lost  ? detector::Presence::Lost
               : last_state_ == GpuState::Error ? detector::Presence::Lost
                                                : detector::Presence::NotResponding;
  c.any_answer = answered_ > 0;
  w.sm_clock_mhz = sm_clock_.stats();
  w.sm_clock_unthrottled_mhz = sm_clock_unthrottled_.stats();
  w.max_sm_clock_mhz = max_sm_clock_.stats();
  w.power_watts = power_.stats();
  w.power_limit_watts = power_limit_.stats();
  w.gpu_util_percent = gpu_util_.stats();
  w.mem_util_percent = mem_util_.stats();
  w.temperature_celsius = temperature_.stats();
  w.gpm_sm_activity = gpm_sm_activity_.stats();
  w.gpm_sm_occupancy = gpm_sm_occupancy_.stats();
  w.gpm_tensor_activity = gpm_tensor_activity_.stats();
  w.gpm_dram_activity = gpm_dram_activity_.stats();
  if (reasons_seen_ > 0) {
    double n = reasons_seen_;
    w.hw_slowdown_fraction = hw_slowdown_ / n;
    w.hw_thermal_fraction = hw_thermal_ / n;
    w.power_brake_fraction = power_brake_ / n;
    w.sw_thermal_fraction = sw_thermal_ / n;
    w.sw_power_cap_fraction = sw_power_cap_ / n;
  }
  w.pcie_gen = pcie_gen_;
  w.pcie_width = pcie_width_;
  w.pcie_gen_max = pcie_gen_max_;
  w.pcie_width_max = pcie_width_max_;
  w.pcie_replays = pcie_replays_.value();
  w.nvlink_crc_errors = nvlink_crc_.value();
  w.nvlink_replay_errors = nvlink_replay_.value();
  w.nvlink_recovery_errors = nvlink_recovery_.value();
  w.nvlink_links_active = nvlinks_active_;
  w.ecc_uncorrected_volatile = ecc_uncorrected_.value();
  w.remapped_rows_pending = remap_pending_;
  w.remapped_rows_failure = remap_failure_;

  // Never stale values: a GPU whose last sample failed is exported by its state alone.
  if (last_state_ != GpuState::Ok && last_state_record_) {
    c.metrics = *last_state_record_;
  } else if (last_ok_) {
    c.metrics = *last_ok_;
    const auto& fields = kIndexedDeviceMetrics->fields;
    for (size_t i = 0; i < fields.size() && i < c.metrics.values.size(); ++i) {
      if (!kIndexedDeviceMetrics->is_measurement(i) || fields_[i].n == 0) continue;
      if (window_aggregation(fields[i]) != Aggregation::Mean) continue;
      double mean = fields_[i].sum / fields_[i].n;
      c.metrics.values[i] =
          fields[i].type == FieldType::Int ? Value(static_cast<int64_t>(std::llround(mean))) : Value(mean);
    }
  } else {
    c.metrics = Record(kIndexedDeviceMetrics);
    c.metrics.at("gpu") = static_cast<int64_t>(gpu_);
    if (!uuid.empty()) c.metrics.at("uuid") = uuid;
  }
  reset();
  return c;
}

}  // namespace gcm::agent
