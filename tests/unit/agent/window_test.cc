#include "agent/window.h"

#include <gtest/gtest.h>

#include "gpu/gpu_records.h"

namespace gcm::agent {
namespace {

DeviceResult ok_sample(unsigned gpu, int64_t sm_mhz, int64_t util, int64_t power_mw, uint64_t reasons = 0,
                       int64_t replays = 0) {
  DeviceResult r;
  r.index = gpu;
  r.sample.uuid = "GPU-" + std::to_string(gpu);
  r.sample.clock_sm_mhz = sm_mhz;
  r.sample.max_clock_sm_mhz = 1980;
  r.sample.gpu_util = util;
  r.sample.power_draw_mw = power_mw;
  r.sample.power_limit_mw = 700000;
  r.sample.temperature = 40 + util / 10;
  r.sample.clock_event_reasons = reasons;
  r.sample.pcie_replay_count = replays;
  r.sample.pcie_link_gen = 5;
  r.sample.pcie_link_width = 16;
  r.sample.ecc_volatile_uncorrected = 0;
  return r;
}

void add(GpuWindowAccumulator& a, const DeviceResult& r) { a.add(r, device_metrics_record(r, "node", "550", {})); }

TEST(AgentWindow, SummaryHasMinMaxMeanLastOfEachSignal) {
  GpuWindowAccumulator a(0);
  add(a, ok_sample(0, 1980, 90, 600000));
  add(a, ok_sample(0, 1800, 100, 700000));
  add(a, ok_sample(0, 1890, 95, 650000));
  auto c = a.close(1000, 3, "42", "GPU-0");
  const auto& w = c.summary;
  EXPECT_EQ(w.samples, 3);
  EXPECT_EQ(w.job_id, "42");
  ASSERT_TRUE(w.sm_clock_mhz);
  EXPECT_DOUBLE_EQ(w.sm_clock_mhz->min, 1800);
  EXPECT_DOUBLE_EQ(w.sm_clock_mhz->max, 1980);
  EXPECT_DOUBLE_EQ(w.sm_clock_mhz->mean, 1890);
  EXPECT_DOUBLE_EQ(w.sm_clock_mhz->last, 1890);
  EXPECT_EQ(w.sm_clock_mhz->samples, 3);
  ASSERT_TRUE(w.power_watts);
  EXPECT_DOUBLE_EQ(w.power_watts->mean, 650);
  EXPECT_EQ(w.presence, detector::Presence::Ok);
}

TEST(AgentWindow, ClockEventFractionsAndCounterIncreases) {
  GpuWindowAccumulator a(1);
  add(a, ok_sample(1, 1980, 90, 600000, 0x0, 10));
  add(a, ok_sample(1, 1500, 90, 600000, 0x8 | 0x40, 12));  // HW slowdown + HW thermal
  add(a, ok_sample(1, 1500, 90, 600000, 0x8, 17));
  add(a, ok_sample(1, 1980, 90, 600000, 0x80, 17));  // power brake
  auto w = a.close(1000, 4, "", "GPU-1").summary;
  EXPECT_DOUBLE_EQ(w.hw_slowdown_fraction, 0.5);
  EXPECT_DOUBLE_EQ(w.hw_thermal_fraction, 0.25);
  EXPECT_DOUBLE_EQ(w.power_brake_fraction, 0.25);
  EXPECT_DOUBLE_EQ(w.sw_power_cap_fraction, 0);
  EXPECT_EQ(w.pcie_replays.value_or(-1), 7);
  EXPECT_EQ(w.ecc_uncorrected_volatile.value_or(-1), 0);
  EXPECT_EQ(w.pcie_width.value_or(0), 16);
}

// The samples without a HW throttle reason have their own clock summary: the peer comparison judges those.
TEST(AgentWindow, TheUnthrottledSamplesClockAndTheActiveNvlinks) {
  GpuWindowAccumulator a(1);
  auto links = [](DeviceResult r, int active) {
    for (unsigned l = 0; l < 4; ++l) r.sample.nvlinks.push_back({l, static_cast<int>(l) < active, 0, 0, 0, 0});
    return r;
  };
  add(a, links(ok_sample(1, 1900, 90, 600000, 0x0), 4));
  add(a, links(ok_sample(1, 1300, 90, 600000, 0x80), 4));  // power brake
  add(a, links(ok_sample(1, 1800, 90, 600000, 0x4), 4));   // SW power cap: not a HW throttle
  add(a, links(ok_sample(1, 1000, 90, 600000, 0x8), 3));   // HW slowdown; one link went inactive
  auto w = a.close(1000, 4, "", "GPU-1").summary;
  ASSERT_TRUE(w.sm_clock_unthrottled_mhz);
  EXPECT_EQ(w.sm_clock_unthrottled_mhz->samples, 2);
  EXPECT_DOUBLE_EQ(w.sm_clock_unthrottled_mhz->mean, 1850);
  EXPECT_DOUBLE_EQ(w.sm_clock_mhz->mean, 1500);
  EXPECT_EQ(w.nvlink_links_active.value_or(-1), 3) << "the last sample's";
  GpuWindowAccumulator none(2);
  add(none, ok_sample(2, 1000, 90, 600000, 0x8));
  auto t = none.close(1000, 1, "", "GPU-2").summary;
  EXPECT_FALSE(t.sm_clock_unthrottled_mhz) << "every sample throttled";
  EXPECT_FALSE(t.nvlink_links_active) << "no NVLink reported";
}

TEST(AgentWindow, ACounterResetCountsFromItsNewValue) {
  GpuWindowAccumulator a(0);
  add(a, ok_sample(0, 1980, 90, 600000, 0, 100));
  add(a, ok_sample(0, 1980, 90, 600000, 0, 3));  // the driver was reloaded
  add(a, ok_sample(0, 1980, 90, 600000, 0, 5));
  EXPECT_EQ(a.close(1000, 3, "", "").summary.pcie_replays.value_or(-1), 5);
}

TEST(AgentWindow, ExportedRecordTakesTheMeanOfLevelsAndTheLastOfCountersAndStates) {
  GpuWindowAccumulator a(0);
  add(a, ok_sample(0, 1000, 50, 600000, 0, 1));
  add(a, ok_sample(0, 2000, 100, 800000, 0, 9));
  Record r = a.close(1000, 2, "", "GPU-0").metrics;
  EXPECT_EQ(r.at("clock_sm_hertz").as_int(), 1500 * 1000000LL);  // hertz: mean
  EXPECT_EQ(r.at("gpu_util").as_int(), 75);                      // percent: mean
  EXPECT_DOUBLE_EQ(r.at("power_watts").as_double(), 700);        // watts: mean
  EXPECT_EQ(r.at("pcie_replay_count").as_int(), 9);              // counter: last
  EXPECT_EQ(r.at("pcie_link_gen").as_int(), 5);                  // state: last
  EXPECT_EQ(r.at("up").as_int(), 1);
}

TEST(AgentWindow, AGpuWhoseLastSampleFailedIsExportedWithoutValues) {
  GpuWindowAccumulator a(2);
  add(a, ok_sample(2, 1980, 90, 600000));
  DeviceResult lost;
  lost.index = 2;
  lost.state = GpuState::Lost;
  lost.detail = "nvmlDeviceGetPowerUsage: GPU is lost";
  add(a, lost);
  auto c = a.close(1000, 2, "7", "GPU-2");
  EXPECT_EQ(c.summary.presence, detector::Presence::Lost);
  EXPECT_TRUE(c.any_answer);
  EXPECT_EQ(c.metrics.at("up").as_int(), 0);
  EXPECT_TRUE(c.metrics.at("clock_sm_hertz").is_null());
  EXPECT_EQ(c.metrics.at("state").as_string(), "lost");
}

TEST(AgentWindow, ClosingStartsAnEmptyWindow) {
  GpuWindowAccumulator a(0);
  add(a, ok_sample(0, 1980, 90, 600000));
  a.close(1000, 1, "", "");
  EXPECT_EQ(a.samples(), 0);
  auto c = a.close(2000, 1, "", "GPU-0");
  EXPECT_FALSE(c.any_answer);
  EXPECT_FALSE(c.summary.sm_clock_mhz);
  EXPECT_EQ(c.metrics.at("gpu").as_int(), 0);
}

TEST(AgentWindow, AggregationFollowsTheFieldsUnitAndRole) {
  for (const auto& f : kIndexedDeviceMetrics->fields) {
    if (f.name == "temperature" || f.name == "gpu_util" || f.name == "power_watts" || f.name == "clock_sm_hertz") {
      EXPECT_EQ(window_aggregation(f), Aggregation::Mean) << f.name;
    }
    if (f.role == FieldRole::Counter || f.name == "pcie_link_gen" || f.name == "up") {
      EXPECT_EQ(window_aggregation(f), Aggregation::Last) << f.name;
    }
  }
}

}  // namespace
}  // namespace gcm::agent
