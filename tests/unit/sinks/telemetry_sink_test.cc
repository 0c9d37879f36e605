// The telemetry sink's files: CSV with the schema's fields in order and one header, NDJSON with every field.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "sinks/sink.h"
#include "sink_fixtures.h"
#include "temp_dir.h"

namespace gcm {
namespace {

using namespace std::chrono_literals;
using namespace gcm::sink_testing;
using gcm::testing::slurp;

class TelemetrySinkFiles : public SinkFiles {};

TEST_F(TelemetrySinkFiles, TelemetryCsvHasTheSchemasFieldsInOrderAndOneHeader) {
  for (int run = 0; run < 2; ++run) {
    auto sink = make_sink("telemetry", {"file_path=" + path("sub/t.csv"), "format=csv"}, quick_retries(0));
    send(*sink, {rec(log_schema(), "c" + std::to_string(run), run)});
  }
  // Every field, nulls as empty cells, nested values as JSON: GCM's asdict() rows.
  EXPECT_EQ(slurp(path("sub/t.csv")),
            "cluster,value,extra,gone\r\n"
            "c0,0,\"{\"\"k\"\":\"\"v\xc3\xa9\"\"}\",\r\n"
            "c1,1,\"{\"\"k\"\":\"\"v\xc3\xa9\"\"}\",\r\n");
}

TEST_F(TelemetrySinkFiles, TelemetryCsvWithAnotherRecordTypeAppendsItsColumns) {
  auto sink = make_sink("telemetry", {"file_path=" + path("t.csv"), "format=csv"}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1, {})});
  Record o(other_schema());
  o[0] = "c2";
  o[1] = 5;
  send(*sink, {o});
  EXPECT_EQ(slurp(path("t.csv.1")), "cluster,value,extra,gone\r\nc1,1,{},\r\n");
  EXPECT_EQ(slurp(path("t.csv")), "cluster,value,extra,gone,user\r\nc2,,,,5\r\n");
}

TEST_F(TelemetrySinkFiles, TelemetryJsonIsNdjsonWithEveryField) {
  auto sink = make_sink("telemetry", {"file_path=" + path("t.jsonl")}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1), rec(metric_schema(), "c2", 2, {})});
  EXPECT_EQ(slurp(path("t.jsonl")),
            "{\"cluster\": \"c1\", \"value\": 1, \"extra\": {\"k\": \"v\\u00e9\"}, \"gone\": null}\n"
            "{\"cluster\": \"c2\", \"value\": 2, \"extra\": {}, \"gone\": null}\n");
  EXPECT_NE(usage_error("telemetry", {}).find("needs -o file_path=PATH"), std::string::npos);
  EXPECT_NE(usage_error("telemetry", {"file_path=" + path("x"), "format=parquet"})
                .find("Unsupported format 'parquet'. Choose from: json, csv"),
            std::string::npos);
}

TEST_F(TelemetrySinkFiles, WithoutBackupsANewHeaderIsRefusedRatherThanTheFileDestroyed) {
  auto sink = make_sink("telemetry", {"file_path=" + path("t.csv"), "format=csv", "backup_count=0"}, quick_retries(0));
  send(*sink, {rec(log_schema(), "c1", 1, {})});
  Record o(other_schema());
  o[0] = "c2";
  o[1] = 5;
  std::string err = sink_error([&] { send(*sink, {o}); });
  EXPECT_NE(err.find("backup_count=0 would destroy the current one"), std::string::npos) << err;
  EXPECT_EQ(slurp(path("t.csv")), "cluster,value,extra,gone\r\nc1,1,{},\r\n");
}

}  // namespace
}  // namespace gcm
