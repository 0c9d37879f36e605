// The otel sink against a real OTLP receiver (@elastic/mockotlpserver from npm, started here): logs from the gcm
// binary over HTTP/protobuf and HTTP/JSON, and metrics with attributes from the sink API.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/logging.h"
#include "helpers.h"
#include "process.h"
#include "sinks/sink.h"

namespace gcm::testing {
namespace {

using namespace std::chrono_literals;

class Receiver {
 public:
  explicit Receiver(const std::string& dir)
      : proc_({"node", std::string(GCM_SOURCE_DIR) + "/tests/integration/otlp_receiver/receiver.js"},
              dir + "/receiver.stderr") {
    auto first = proc_.read_line(30s);
    if (!first) throw std::runtime_error("the OTLP receiver did not start: " + read_text(dir + "/receiver.stderr"));
    auto j = nlohmann::json::parse(*first);
    http_url = j["http"].get<std::string>();
    if (!http_url.empty() && http_url.back() == '/') http_url.pop_back();
    grpc_url = j["grpc"].get<std::string>();
  }
  // The next request of the given signal.
  nlohmann::json next(const std::string& signal) {
    while (auto line = proc_.read_line(20s)) {
      auto j = nlohmann::json::parse(*line);
      if (j.value("signal", "") == signal) return j["data"];
    }
    throw std::runtime_error("no " + signal + " request arrived");
  }
  std::string http_url;
  std::string grpc_url;  // http://localhost:PORT/

 private:
  BackgroundProcess proc_;
};

// The receiver renders int64 attributes as numbers for OTLP/HTTP and as decimal strings for gRPC (its protobufjs
// decoding keeps 64-bit integers exact that way); both mean the same integer.
int64_t as_int(const nlohmann::json& v) { return v.is_string() ? std::stoll(v.get<std::string>()) : v.get<int64_t>(); }

void expect_storage_logs(const nlohmann::json& data) {
  const auto& rl = data["resourceLogs"][0];
  const auto& res = rl["resource"]["attributes"];
  EXPECT_EQ(res["service.name"], "gcm");
  EXPECT_EQ(res["key1"], "val1");
  EXPECT_TRUE(res.contains("host.name"));
  const auto& rec = rl["scopeLogs"][0]["logRecords"][0];
  EXPECT_EQ(rec["severityText"], "INFO");
  const auto& a = rec["attributes"];
  EXPECT_EQ(a["cluster"], "otlp-it");
  EXPECT_EQ(a["directory"], "/");
  EXPECT_GT(as_int(a["f_blocks"]), 0);
  EXPECT_GT(as_int(a["time"]), 1700000000);
  EXPECT_EQ(rl["scopeLogs"][0]["scope"]["name"], "gcm");
}

TEST(OtlpReceiver, LogsOverHttpProtobufAndJsonFromTheBinary) {
  ASSERT_FALSE(find_executable("node").empty()) << "node is not installed";
  auto dir = temp_dir("otlp");
  Receiver rx(dir);
  for (const std::string protocol : {"http/protobuf", "http/json"}) {
    SCOPED_TRACE(protocol);
    auto r = run_gcm({"storage", "--once", "--cluster", "otlp-it", "--statvfs-patterns", "otlp-it=^/$", "--sink",
                      "otel", "-o", "otel_endpoint=" + rx.http_url, "-o", "protocol=" + protocol, "-o",
                      "log_resource_attributes={'key1': 'val1'}", "--log-folder", dir});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_storage_logs(rx.next("logs"));
  }
}

TEST(OtlpReceiver, LogsOverGrpcFromTheBinary) {
  auto dir = temp_dir("otlp-grpc");
  Receiver rx(dir);
  for (const std::string compression : {"none", "gzip"}) {
    SCOPED_TRACE(compression);
    auto r =
        run_gcm({"storage", "--once", "--cluster", "otlp-it", "--statvfs-patterns", "otlp-it=^/$", "--sink", "otel",
                 "-o", "otel_endpoint=" + rx.grpc_url, "-o", "protocol=grpc", "-o", "compression=" + compression, "-o",
                 "log_resource_attributes={'key1': 'val1'}", "--log-folder", dir});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_storage_logs(rx.next("logs"));
  }
}

TEST(OtlpReceiver, GrpcWithoutTheTransportModuleIsAClearUsageError) {
  auto dir = temp_dir("otlp-grpc-missing");
  // The binary with no module beside it, and the override pointing nowhere. A hard link where the file system
  // allows, and removed at the end either way: a 300 MB copy left behind by every run filled /tmp.
  std::error_code link_error;
  std::filesystem::create_hard_link(gcm_binary(), dir + "/gcm", link_error);
  if (link_error) std::filesystem::copy_file(gcm_binary(), dir + "/gcm");
  struct RemoveCopy {
    std::string path;
    ~RemoveCopy() { std::filesystem::remove(path); }
  } remove_copy{dir + "/gcm"};
  CommandSpec spec;
  spec.argv = {dir + "/gcm",
               "storage",
               "--once",
               "--cluster",
               "c",
               "--statvfs-patterns",
               "c=^/$",
               "--sink",
               "otel",
               "-o",
               "otel_endpoint=http://127.0.0.1:4317",
               "-o",
               "protocol=grpc",
               "--log-folder",
               dir};
  spec.extra_env = {"GCM_OTLP_GRPC_MODULE=" + dir + "/missing.so"};
  auto r = run_command(spec);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("libgcm_otlp_grpc.so could not be loaded; tried"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(dir + "/missing.so"), std::string::npos) << r.err;
}

TEST(OtlpReceiver, EnvironmentVariablesConfigureTheSink) {
  auto dir = temp_dir("otlp-env");
  Receiver rx(dir);
  auto r = run_gcm({"storage", "--once", "--cluster", "otlp-it", "--statvfs-patterns", "otlp-it=^/$", "--sink", "otel",
                    "-o", "log_resource_attributes={'key1': 'val1'}", "--log-folder", dir},
                   60s, {"OTEL_EXPORTER_OTLP_ENDPOINT=" + rx.http_url, "OTEL_EXPORTER_OTLP_TIMEOUT=5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_storage_logs(rx.next("logs"));
}

TEST(OtlpReceiver, MetricRecordsBecomeGaugesAndSumsWithAttributes) {
  auto dir = temp_dir("otlp-metrics");
  Receiver rx(dir);
  Schema s;
  s.name = "GpuTest";
  s.metric_prefix = "gpu";
  s.data_type = DataType::Metric;
  s.fields = {{"gpu", FieldType::Int, FieldRole::Identity},
              {"uuid", FieldType::String, FieldRole::Identity},
              {"temperature", FieldType::Double, FieldRole::Gauge, "celsius", "GPU temperature"},
              {"xid_errors", FieldType::Int, FieldRole::Counter, "", "XID errors"}};
  SinkContext ctx;
  ctx.log = stderr_logger("test");
  ctx.retry.initial_backoff_s = 0.1;
  for (const std::string protocol : {"http/protobuf", "http/json", "grpc"}) {
    SCOPED_TRACE(protocol);
    std::vector<std::string> opts = {"metric_resource_attributes={'cluster': 'x'}", "protocol=" + protocol};
    if (protocol == "grpc") {
      setenv("GCM_OTLP_GRPC_MODULE", GCM_GRPC_MODULE, 1);
      opts.push_back("otel_endpoint=" + rx.grpc_url);
    } else {
      opts.push_back("otel_endpoint=" + rx.http_url);
    }
    auto sink = make_sink("otel", opts, ctx);
    BatchInfo info;
    info.ts = 1700000000;
    info.schema = &s;
    info.data_type = DataType::Metric;
    sink->begin_round(info);
    sink->begin_chunk(info);
    Record r(s);
    for (int g = 0; g < 8; ++g) {
      r[0] = g;
      r[1] = "GPU-" + std::to_string(g);
      r[2] = 40.0 + g;
      r[3] = g % 2;
      sink->write(r);
    }
    sink->end_chunk();
    sink->end_round(info);
    auto data = rx.next("metrics");
    const auto& rm = data["resourceMetrics"][0];
    EXPECT_EQ(rm["resource"]["attributes"]["cluster"], "x");
    EXPECT_EQ(rm["resource"]["attributes"]["service.name"], "gcm");
    const auto& metrics = rm["scopeMetrics"][0]["metrics"];
    ASSERT_EQ(metrics.size(), 2u) << data.dump();
    EXPECT_EQ(metrics[0]["name"], "gcm.gpu.temperature");
    EXPECT_EQ(metrics[0]["unit"], "Cel");
    const auto& points = metrics[0]["gauge"]["dataPoints"];
    ASSERT_EQ(points.size(), 8u);
    EXPECT_EQ(as_int(points[3]["attributes"]["gpu"]), 3);
    EXPECT_EQ(points[3]["attributes"]["uuid"], "GPU-3");
    EXPECT_DOUBLE_EQ(points[3]["asDouble"].get<double>(), 43.0);
    EXPECT_EQ(metrics[1]["name"], "gcm.gpu.xid_errors");
    EXPECT_TRUE(metrics[1]["sum"]["isMonotonic"].get<bool>());
    EXPECT_EQ(metrics[1]["sum"]["dataPoints"].size(), 8u);
  }
}

}  // namespace
}  // namespace gcm::testing
