// One GPU's window: the agent samples every GPU each --collect-interval and closes a window every --window seconds.
// A closed window gives two things: the GpuWindow summary the zombie-GPU detector judges (min, max, mean and last
// of its signals, clock-event fractions, counter increases), and the IndexedDeviceMetrics record that Prometheus and
// OTLP export, whose measurements are aggregated the way window_aggregation() says for each field.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/record.h"
#include "detector/gpu_window.h"
#include "gpu/gpu_sampler.h"

namespace gcm::agent {

// How a measurement of IndexedDeviceMetrics is summarised over a window: counters and states by their last value
// (a counter's last value is its value; a PCIe generation has no mean), rates and levels (utilisation, power,
// clocks, temperature, bandwidth) by their mean, so a scrape between two windows sees the window's typical value and
// a 1 s spike does not stand for 30 s.
enum class Aggregation { Last, Mean };
Aggregation window_aggregation(const FieldSpec& f);

class GpuWindowAccumulator {
 public:
  explicit GpuWindowAccumulator(unsigned gpu);
  // One sample of this GPU and its IndexedDeviceMetrics record (device_metrics_record of the same result).
  void add(const DeviceResult& r, const Record& metrics);

  struct Closed {
    detector::GpuWindow summary;
    Record metrics;  // the aggregated record; a GPU whose last sample failed: that sample's state record, no values
    bool any_answer = false;  // at least one sample answered during the window
  };
  // Closes the window and starts the next one. uuid: the GPU's last known UUID.
  Closed close(int64_t end_unix_ms, double seconds, const std::string& job_id, const std::string& uuid);
  int samples() const { return samples_; }

 private:
  struct Stat {
    double min = 0, max = 0, sum = 0, last = 0;
    int n = 0;
    void add(double v);
    std::optional<detector::FieldStats> stats() const;
  };
  // A counter's increase over the window: last - first (a reset, i.e. a driver reload, counts from the new value).
  struct Delta {
    std::optional<double> first, prev;
    double increase = 0;
    void add(double v);
    std::optional<int64_t> value() const;
  };
  void reset();

  unsigned gpu_;
  int samples_ = 0, answered_ = 0;
  GpuState last_state_ = GpuState::Ok;
  std::optional<Record> last_ok_, last_state_record_;
  std::vector<Stat> fields_;  // per field of IndexedDeviceMetrics
  Stat sm_clock_, sm_clock_unthrottled_, max_sm_clock_, power_, power_limit_, gpu_util_, mem_util_, temperature_;
  Stat gpm_sm_activity_, gpm_sm_occupancy_, gpm_tensor_activity_, gpm_dram_activity_;
  int hw_slowdown_ = 0, hw_thermal_ = 0, power_brake_ = 0, sw_thermal_ = 0, sw_power_cap_ = 0, reasons_seen_ = 0;
  std::optional<int64_t> pcie_gen_, pcie_width_, pcie_gen_max_, pcie_width_max_, remap_pending_, remap_failure_;
  std::optional<int64_t> nvlinks_active_;
  Delta pcie_replays_, nvlink_crc_, nvlink_replay_, nvlink_recovery_, ecc_uncorrected_;
};

}  // namespace gcm::agent
