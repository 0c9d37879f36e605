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

// A LOG schema with info_labels: one gcm_<prefix>_info series per record, labelled with its identities and those
// attributes (a null one left out); a record whose reason changed replaces its old info series at the next round.
TEST(PrometheusStore, InfoSeriesCarryTheDeclaredAttributesAsLabels) {
  Schema s;
  s.name = "NodeT";
  s.metric_prefix = "slurm_node";
  s.fields = {
      {"NODE_NAME", FieldType::String, FieldRole::Identity}, {"CPUS", FieldType::Int, FieldRole::Gauge, "", "CPUs"},
      {"STATE", FieldType::String, FieldRole::Attribute},    {"REASON", FieldType::String, FieldRole::Attribute},
      {"COMMENT", FieldType::String, FieldRole::Attribute},
  };
  s.info_labels = {"STATE", "REASON"};
  PrometheusStore store;
  Record r(s);
  store.begin_round(s);
  r[0] = "n1";
  r[1] = 4;
  r[2] = "drained";
  r[3] = "gcm: ecc: 1 \"error\"";
  r[4] = "not a label";
  store.add(r);
  r[0] = "n2";
  r[2] = "idle";
  r[3] = Value();
  store.add(r);
  store.end_round(s);
  EXPECT_EQ(store.render(),
            "# HELP gcm_slurm_node_CPUS CPUs\n"
            "# TYPE gcm_slurm_node_CPUS gauge\n"
            "gcm_slurm_node_CPUS{NODE_NAME=\"n1\"} 4\n"
            "gcm_slurm_node_CPUS{NODE_NAME=\"n2\"} 4\n"
            "# HELP gcm_slurm_node_info 1 per NodeT record, labelled with its identity fields and STATE, REASON\n"
            "# TYPE gcm_slurm_node_info gauge\n"
            "gcm_slurm_node_info{NODE_NAME=\"n1\",STATE=\"drained\",REASON=\"gcm: ecc: 1 \\\"error\\\"\"} 1\n"
            "gcm_slurm_node_info{NODE_NAME=\"n2\",STATE=\"idle\"} 1\n");

  store.begin_round(s);
  r[0] = "n1";
  r[2] = "idle";
  r[3] = "none";
  store.add(r);
  store.end_round(s);
  std::string text = store.render();
  EXPECT_NE(text.find("gcm_slurm_node_info{NODE_NAME=\"n1\",STATE=\"idle\",REASON=\"none\"} 1\n"), std::string::npos);
  EXPECT_EQ(text.find("drained"), std::string::npos) << text;
  EXPECT_EQ(text.find("n2"), std::string::npos) << text;
}

TEST(PrometheusStore, Values) {
  EXPECT_EQ(prometheus_value(3), "3");
  EXPECT_EQ(prometheus_value(0.25), "0.25");
  EXPECT_EQ(prometheus_value(1e20), "1e+20");
  EXPECT_EQ(prometheus_value(std::nan("")), "NaN");
  EXPECT_EQ(prometheus_value(-std::numeric_limits<double>::infinity()), "-Inf");
}

// Freshness: a failed round leaves the last good values in place (so Prometheus alone cannot see it); the store
// says when the last good round started and how many failed, per schema, and the collector's interval.
TEST(PrometheusStore, TellsWhenTheCollectorLastSucceededAndHowManyRoundsFailed) {
  Schema s = gpu_schema();
  PrometheusStore store;
  store.begin_round(s);
  store.end_round(s);
  EXPECT_EQ(store.render().find("gcm_collector_"), std::string::npos) << "nothing without a collector name";
  store.set_collector("slurm_monitor", 300);
  store.round_failed(s);
  std::string first = store.render();
  EXPECT_NE(first.find("gcm_collector_interval_seconds{collector=\"slurm_monitor\"} 300\n"), std::string::npos)
      << first;
  EXPECT_EQ(first.find("gcm_collector_last_success_timestamp_seconds"), std::string::npos)
      << "no success yet is no series, not 1970: " << first;
  EXPECT_NE(first.find("gcm_collector_failed_rounds_total{collector=\"slurm_monitor\",schema=\"GpuT\"} 1\n"),
            std::string::npos);
  store.round_succeeded(s, 1700000000);
  store.round_failed(s);
  std::string page = store.render();
  EXPECT_NE(page.find("# TYPE gcm_collector_last_success_timestamp_seconds gauge\n"
                      "gcm_collector_last_success_timestamp_seconds{collector=\"slurm_monitor\",schema=\"GpuT\"} "
                      "1700000000\n"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("gcm_collector_rounds_total{collector=\"slurm_monitor\",schema=\"GpuT\"} 3\n"),
            std::string::npos);
  EXPECT_NE(page.find("gcm_collector_failed_rounds_total{collector=\"slurm_monitor\",schema=\"GpuT\"} 2\n"),
            std::string::npos);
}

}  // namespace
}  // namespace gcm
