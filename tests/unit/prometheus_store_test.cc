#include "sinks/prometheus_store.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gcm {
namespace {

Schema gpu_schema() {
  Schema s;
  s.name = "GpuT";
  s.metric_prefix = "gpu";
  s.data_type = DataType::Metric;
  s.fields = {
      {"gpu", FieldType::Int, FieldRole::Identity},
      {"host", FieldType::String, FieldRole::Identity},
      {"temperature", FieldType::Double, FieldRole::Gauge, "celsius", "GPU temperature"},
      {"xid_errors", FieldType::Int, FieldRole::Counter, "", "XID errors"},
      {"note", FieldType::String, FieldRole::Attribute},
  };
  return s;
}

TEST(PrometheusStore, RendersFamiliesWithLabelsUnitsAndTypes) {
  Schema s = gpu_schema();
  PrometheusStore store;
  store.begin_round(s);
  Record r(s);
  r[0] = 0;
  r[1] = "h\"1\n";
  r[2] = 41.5;
  r[3] = 2;
  r[4] = "ignored";
  store.add(r);
  store.end_round(s);
  EXPECT_EQ(store.render(),
            "# HELP gcm_gpu_temperature_celsius GPU temperature\n"
            "# TYPE gcm_gpu_temperature_celsius gauge\n"
            "gcm_gpu_temperature_celsius{gpu=\"0\",host=\"h\\\"1\\n\"} 41.5\n"
            "# HELP gcm_gpu_xid_errors_total XID errors\n"
            "# TYPE gcm_gpu_xid_errors_total counter\n"
            "gcm_gpu_xid_errors_total{gpu=\"0\",host=\"h\\\"1\\n\"} 2\n");
}

TEST(PrometheusStore, ARoundReplacesTheSchemasSeries) {
  Schema s = gpu_schema();
  PrometheusStore store;
  Record r(s);
  store.begin_round(s);
  for (int g = 0; g < 3; ++g) {
    r[0] = g;
    r[2] = 30.0 + g;
    store.add(r);
  }
  store.end_round(s);
  EXPECT_EQ(store.series_count(), 3u);
  store.begin_round(s);
  r[0] = 1;
  r[2] = 50.0;
  store.add(r);
  store.end_round(s);
  EXPECT_EQ(store.series_count(), 1u);
  EXPECT_NE(store.render().find("gcm_gpu_temperature_celsius{gpu=\"1\"} 50\n"), std::string::npos);
}

TEST(PrometheusStore, Values) {
  EXPECT_EQ(prometheus_value(3), "3");
  EXPECT_EQ(prometheus_value(0.25), "0.25");
  EXPECT_EQ(prometheus_value(1e20), "1e+20");
  EXPECT_EQ(prometheus_value(std::nan("")), "NaN");
  EXPECT_EQ(prometheus_value(-std::numeric_limits<double>::infinity()), "-Inf");
}

}  // namespace
}  // namespace gcm
