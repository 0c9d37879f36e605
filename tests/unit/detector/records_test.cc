// The verdicts rendered through the PrometheusStore: exactly the contract's metric names and labels.
#include <gtest/gtest.h>

#include "detector/detector.h"
#include "detector/health_records.h"
#include "detector_test_windows.h"
#include "sinks/prometheus_store.h"

namespace gcm::detector {
namespace {

std::string render(const std::vector<GpuVerdict>& verdicts) {
  std::vector<Record> recs;
  append_health_metrics(verdicts, recs);
  PrometheusStore store;
  for (const Schema* s : {&kGpuHealthState.get(), &kGpuHealthReason.get(), &kGpuPeerDeviation.get()})
    store.begin_round(*s);
  for (const auto& r : recs) store.add(r);
  for (const Schema* s : {&kGpuHealthState.get(), &kGpuHealthReason.get(), &kGpuPeerDeviation.get()})
    store.end_round(*s);
  return store.render();
}

std::vector<GpuVerdict> slow_gpu3() {
  Detector d;
  std::vector<GpuVerdict> v;
  for (int r = 0; r < 10; ++r) {
    auto ws = test::busy_node();
    if (r >= 6) ws[3].sm_clock_mhz = test::flat(1980 * 0.93 * 0.9);
    v = d.observe(ws);
  }
  return v;
}

TEST(DetectorRecords, RenderTheContractNames) {
  std::string text = render(slow_gpu3());
  EXPECT_NE(text.find("# TYPE gcm_gpu_health_state gauge\n"), std::string::npos);
  EXPECT_NE(text.find("gcm_gpu_health_state{gpu=\"3\",uuid=\"GPU-3\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gcm_gpu_health_state{gpu=\"0\",uuid=\"GPU-0\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("gcm_gpu_health_reason{gpu=\"3\",uuid=\"GPU-3\",reason=\"peer_slow\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("gcm_gpu_health_reason{gpu=\"3\",uuid=\"GPU-3\",reason=\"ecc_dbe\"} 0\n"), std::string::npos);
  const std::string dev = "gcm_gpu_peer_deviation_ratio{gpu=\"3\",uuid=\"GPU-3\",signal=\"sm_clock\"} ";
  size_t at = text.find(dev);
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NEAR(std::stod(text.substr(at + dev.size())), -0.1, 1e-6);
  EXPECT_NE(text.find("gcm_gpu_peer_zscore{gpu=\"3\",uuid=\"GPU-3\",signal=\"power\"}"), std::string::npos);
  // Every family is one of the four contract names.
  size_t pos = 0;
  int families = 0;
  while ((pos = text.find("# TYPE ", pos)) != std::string::npos) {
    std::string name = text.substr(pos + 7, text.find(' ', pos + 7) - pos - 7);
    EXPECT_TRUE(name == "gcm_gpu_health_state" || name == "gcm_gpu_health_reason" ||
                name == "gcm_gpu_peer_deviation_ratio" || name == "gcm_gpu_peer_zscore")
        << name;
    ++families;
    ++pos;
  }
  EXPECT_EQ(families, 4);
}

TEST(DetectorRecords, EveryReasonOfEveryGpuIsASeries) {
  std::vector<Record> recs;
  append_health_metrics(slow_gpu3(), recs);
  PrometheusStore store;
  store.begin_round(kGpuHealthReason);
  for (const auto& r : recs) {
    if (r.schema == &kGpuHealthReason.get()) store.add(r);
  }
  store.end_round(kGpuHealthReason);
  EXPECT_EQ(store.series_count(), 8u * kReasonCount);
}

TEST(DetectorRecords, StateChangesAreLogRecordsWithTheEvidence) {
  Detector d;
  std::vector<Record> logs;
  for (int r = 0; r < 10; ++r) {
    auto ws = test::busy_node();
    if (r >= 6) ws[3].sm_clock_mhz = test::flat(1980 * 0.93 * 0.9);
    append_health_events(d.observe(ws), "node1", logs);
  }
  ASSERT_EQ(logs.size(), 2u);  // suspect, degraded
  const Record& deg = logs[1];
  EXPECT_EQ(deg.schema->data_type, DataType::Log);
  EXPECT_EQ(deg.at("to_state").as_string(), "degraded");
  EXPECT_EQ(deg.at("reasons").as_string(), "peer_slow");
  EXPECT_EQ(deg.at("hostname").as_string(), "node1");
  EXPECT_NEAR(deg.at("sm_clock_deviation").as_double(), -0.1, 1e-6);
  EXPECT_NE(deg.at("evidence").as_string().find("peers' median"), std::string::npos);
}

}  // namespace
}  // namespace gcm::detector
