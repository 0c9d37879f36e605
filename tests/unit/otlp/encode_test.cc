#include "otlp/encode.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gcm {
namespace {

Schema metric_schema() {
  Schema s;
  s.name = "M";
  s.metric_prefix = "gpu";
  s.data_type = DataType::Metric;
  s.fields = {
      {"gpu", FieldType::Int, FieldRole::Identity},
      {"uuid", FieldType::String, FieldRole::Identity},
      {"power", FieldType::Double, FieldRole::Gauge, "watts", "power draw"},
      {"energy", FieldType::Int, FieldRole::Counter, "joules"},
  };
  return s;
}

TEST(OtlpEncode, MetricsCarryIdentityAttributesUnitsAndTypes) {
  Schema s = metric_schema();
  otlp::MetricsBuilder b({{"service.name", Value("gcm")}});
  Record r(s);
  for (int g = 0; g < 2; ++g) {
    r[0] = g;
    r[1] = "GPU-" + std::to_string(g);
    r[2] = 100.5 + g;
    r[3] = 1000 * (g + 1);
    b.add(r, 1700000000);
  }
  const auto& req = b.request();
  ASSERT_EQ(req.resource_metrics_size(), 1);
  EXPECT_EQ(req.resource_metrics(0).resource().attributes(0).key(), "service.name");
  const auto& metrics = req.resource_metrics(0).scope_metrics(0).metrics();
  ASSERT_EQ(metrics.size(), 2);
  EXPECT_EQ(metrics[0].name(), "gcm.gpu.power");
  EXPECT_EQ(metrics[0].unit(), "W");
  ASSERT_TRUE(metrics[0].has_gauge());
  ASSERT_EQ(metrics[0].gauge().data_points_size(), 2);
  const auto& dp = metrics[0].gauge().data_points(1);
  EXPECT_DOUBLE_EQ(dp.as_double(), 101.5);
  EXPECT_EQ(dp.time_unix_nano(), 1700000000ull * 1000000000ull);
  ASSERT_EQ(dp.attributes_size(), 2);
  EXPECT_EQ(dp.attributes(0).key(), "gpu");
  EXPECT_EQ(dp.attributes(0).value().int_value(), 1);
  EXPECT_EQ(dp.attributes(1).value().string_value(), "GPU-1");
  EXPECT_EQ(metrics[1].name(), "gcm.gpu.energy");
  ASSERT_TRUE(metrics[1].has_sum());
  EXPECT_TRUE(metrics[1].sum().is_monotonic());
  EXPECT_EQ(metrics[1].sum().data_points(1).as_int(), 2000);
  EXPECT_EQ(b.points(), 4u);
}

TEST(OtlpEncode, LogsAreFlattenedRecordsWithTime) {
  Schema s;
  s.name = "L";
  s.fields = {{"job"}, {"tres"}, {"none"}};
  otlp::LogsBuilder b({});
  Record r(s);
  r[0] = "42";
  r[1] = Value(Object{{"gpu", Value(8)}});
  b.add(r, 1700000000, 5);
  const auto& lr = b.request().resource_logs(0).scope_logs(0).log_records(0);
  EXPECT_EQ(lr.severity_text(), "INFO");
  EXPECT_EQ(lr.severity_number(), 9);
  EXPECT_EQ(lr.body().string_value(), "");
  ASSERT_EQ(lr.attributes_size(), 3);
  EXPECT_EQ(lr.attributes(0).key(), "job");
  EXPECT_EQ(lr.attributes(1).key(), "tres.gpu");
  EXPECT_EQ(lr.attributes(1).value().int_value(), 8);
  EXPECT_EQ(lr.attributes(2).key(), "time");
  EXPECT_EQ(lr.attributes(2).value().int_value(), 1700000000);
}

TEST(OtlpEncode, JsonUsesCamelCaseAndIntegerEnums) {
  Schema s;
  s.name = "L";
  s.fields = {{"a"}};
  otlp::LogsBuilder b({{"service.name", Value("gcm")}});
  Record r(s);
  r[0] = "x";
  b.add(r, 1, 2);
  auto j = nlohmann::json::parse(otlp::to_json(b.request()));
  const auto& rec = j["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0];
  EXPECT_EQ(rec["severityNumber"], 9);
  EXPECT_EQ(rec["timeUnixNano"], "1000000000");
  EXPECT_EQ(rec["attributes"][0]["value"]["stringValue"], "x");
}

TEST(OtlpEncode, ClearKeepsResource) {
  Schema s = metric_schema();
  otlp::MetricsBuilder b({{"k", Value("v")}});
  Record r(s);
  r[2] = 1.0;
  b.add(r, 1);
  b.clear();
  EXPECT_EQ(b.points(), 0u);
  EXPECT_EQ(b.request().resource_metrics(0).scope_metrics(0).metrics_size(), 0);
  EXPECT_EQ(b.request().resource_metrics(0).resource().attributes_size(), 1);
}

}  // namespace
}  // namespace gcm
