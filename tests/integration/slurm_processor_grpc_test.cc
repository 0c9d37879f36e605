// slurm_processor's OTLP/gRPC receiver (--grpc-listen), without the Slurm testbed: the jobs come from the
// mapping-files source over the fake NVML's GPUs. Our exporter's gRPC metrics arrive downstream enriched; logs and
// traces have their methods; bad calls (undecodable, oversized also after gzip inflation, unknown method) get the
// gRPC status OTLP prescribes and the service keeps serving; a full queue answers UNAVAILABLE; a port in use is a
// start-up error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/http_client.h"
#include "logs_service.pb.h"
#include "metrics_service.pb.h"
#include "trace_service.pb.h"
#include "otlp/grpc_loader.h"
#include "slurm_processor_process.h"

namespace gcm::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using MetricsReq = opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest;

constexpr const char* kMetricsExport = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export";

struct GrpcAnswer {
  int code = -1;
  std::string message;
  std::string body;
};

// One raw unary call through the transport module's client: any method, any bytes.
GrpcAnswer call(const std::string& target, const std::string& method, const std::string& body, bool gzip = false) {
  setenv("GCM_OTLP_GRPC_MODULE", GCM_GRPC_MODULE, 1);
  auto fn = gcm::otlp::load_grpc_transport();
  std::string response(1 << 16, '\0');
  char message[1024] = "";
  size_t len = 0;
  GrpcAnswer a;
  a.code = fn(target.c_str(), 0, method.c_str(), body.data(), body.size(), 10000, nullptr, gzip ? 1 : 0,
              response.data(), response.size(), &len, message, sizeof message);
  a.message = message;
  a.body = response.substr(0, std::min(len, response.size()));
  return a;
}

// A request of `count` gauge points of a host no source can attribute (they pass unchanged).
std::string gauge_request(int count) {
  MetricsReq m;
  auto* rm = m.add_resource_metrics();
  auto* kv = rm->mutable_resource()->add_attributes();
  kv->set_key("host.name");
  kv->mutable_value()->set_string_value("elsewhere-node");
  auto* g = rm->add_scope_metrics()->add_metrics();
  g->set_name("seq");
  for (int i = 0; i < count; ++i) g->mutable_gauge()->add_data_points()->set_as_int(i);
  return m.SerializeAsString();
}

std::string metrics_of(const ProcessorProcess& proc) {
  HttpClient http;
  return http.get(proc.url + "/metrics", 5s).body;
}

bool has_line(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST(SlurmProcessorGrpc, OurExportersGrpcMetricsArriveWithEachGpusJob) {
  ASSERT_FALSE(find_executable("node").empty()) << "node is not installed";
  auto dir = temp_dir("slurm-processor-grpc");
  // Two fake GPUs; the mapping files say which job each runs (what a prolog writes).
  json gpus = json::array();
  std::filesystem::create_directories(dir + "/map");
  for (unsigned i = 0; i < 2; ++i) {
    gpus.push_back({{"uuid", "GPU-grpc-" + std::to_string(i)}, {"utilization", {{"gpu", 50}, {"memory", 5}}}});
    std::ofstream(dir + "/map/" + std::to_string(i)) << 4242 + i << "\n";
  }
  std::ofstream(dir + "/scenario.json") << json{{"devices", gpus}}.dump();
  std::vector<std::string> env = {"GCM_FAKE_NVML_SCENARIO=" + dir + "/scenario.json",
                                  std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML};
  OtlpReceiverProcess rx(dir);
  ProcessorProcess proc(dir,
                        {"--grpc-listen", "127.0.0.1:0", "--downstream", rx.url, "--attribution", "mapping-files",
                         "--gpu-job-mapping-dir", dir + "/map", "--batch-timeout", "0.05"},
                        env);
  auto r = run_gcm({"nvml_monitor", "--once", "--push-interval", "0.1", "--collect-interval", "0.1", "--sink", "otel",
                    "-o", "otel_endpoint=http://" + proc.grpc_target, "-o", "protocol=grpc", "--log-folder", dir},
                   60s, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  JobsByGpu seen = jobs_by_gpu(rx);
  ASSERT_GT(seen.points, 0u);
  EXPECT_EQ(seen.job_ids["0"], std::set<std::string>{"4242"});
  EXPECT_EQ(seen.job_ids["1"], std::set<std::string>{"4243"});
  auto metrics = metrics_of(proc);
  EXPECT_FALSE(has_line(metrics, "gcm_slurm_processor_requests_total{signal=\"metrics\",transport=\"grpc\"} 0"))
      << metrics;
  EXPECT_TRUE(has_line(metrics, "gcm_slurm_processor_requests_total{signal=\"metrics\",transport=\"http\"} 0"))
      << metrics;
  EXPECT_EQ(proc.stop(), 0);
  std::filesystem::remove_all(dir);
}

TEST(SlurmProcessorGrpc, LogsAndTracesHaveTheirMethods) {
  ASSERT_FALSE(find_executable("node").empty()) << "node is not installed";
  auto dir = temp_dir("slurm-processor-grpc-signals");
  OtlpReceiverProcess rx(dir);
  ProcessorProcess proc(dir, {"--grpc-listen", "127.0.0.1:0", "--downstream", rx.url, "--attribution", "slurmd-local",
                              "--scontrol", "/bin/false", "--batch-timeout", "0.01"});
  opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest logs;
  logs.add_resource_logs()->add_scope_logs()->add_log_records()->mutable_body()->set_string_value("over gRPC");
  auto a =
      call(proc.grpc_target, "/opentelemetry.proto.collector.logs.v1.LogsService/Export", logs.SerializeAsString());
  ASSERT_EQ(a.code, 0) << a.message;
  json data = rx.next("logs");
  ASSERT_FALSE(data.is_null());
  EXPECT_NE(data.dump().find("over gRPC"), std::string::npos) << data;
  opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest traces;
  auto* span = traces.add_resource_spans()->add_scope_spans()->add_spans();
  span->set_name("grpc-span");
  span->set_trace_id(std::string(16, '\x01'));
  span->set_span_id(std::string(8, '\x02'));
  a = call(proc.grpc_target, "/opentelemetry.proto.collector.trace.v1.TraceService/Export", traces.SerializeAsString());
  ASSERT_EQ(a.code, 0) << a.message;
  data = rx.next("traces");
  ASSERT_FALSE(data.is_null());
  EXPECT_NE(data.dump().find("grpc-span"), std::string::npos) << data;
  auto metrics = metrics_of(proc);
  for (const char* line : {"gcm_slurm_processor_requests_total{signal=\"logs\",transport=\"grpc\"} 1",
                           "gcm_slurm_processor_requests_total{signal=\"traces\",transport=\"grpc\"} 1"})
    EXPECT_TRUE(has_line(metrics, line)) << line << "\n" << metrics;
  EXPECT_EQ(proc.stop(), 0);
  std::filesystem::remove_all(dir);
}

TEST(SlurmProcessorGrpc, BadCallsGetTheirStatusAndTheServiceKeepsServing) {
  ASSERT_FALSE(find_executable("node").empty()) << "node is not installed";
  auto dir = temp_dir("slurm-processor-grpc-bad");
  OtlpReceiverProcess rx(dir);
  ProcessorProcess proc(dir, {"--grpc-listen", "127.0.0.1:0", "--downstream", rx.url, "--attribution", "slurmd-local",
                              "--scontrol", "/bin/false", "--max-request-size", "1", "--batch-timeout", "0.01"});
  std::string good = gauge_request(3);

  auto a = call(proc.grpc_target, kMetricsExport, good.substr(0, good.size() - 4));
  EXPECT_EQ(a.code, 3) << "truncated protobuf: INVALID_ARGUMENT; " << a.message;
  EXPECT_NE(a.message.find("ExportMetricsServiceRequest"), std::string::npos) << a.message;

  a = call(proc.grpc_target, "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export", good);
  EXPECT_EQ(a.code, 12) << "unknown method: UNIMPLEMENTED; " << a.message;
  EXPECT_NE(a.message.find("unknown method"), std::string::npos) << a.message;

  a = call(proc.grpc_target, kMetricsExport, std::string(2 << 20, 'x'));
  EXPECT_EQ(a.code, 8) << "2 MiB over a 1 MiB limit: RESOURCE_EXHAUSTED; " << a.message;
  // A few KiB on the wire, 2 MiB once inflated: over the limit too, found while inflating (gRPC itself would
  // inflate it whole first; zeros would otherwise be INVALID_ARGUMENT).
  a = call(proc.grpc_target, kMetricsExport, std::string(2 << 20, '\0'), /*gzip=*/true);
  EXPECT_EQ(a.code, 8) << "2 MiB gzip-compressed: RESOURCE_EXHAUSTED; " << a.message;
  EXPECT_NE(a.message.find("inflates to more than 1048576 bytes"), std::string::npos) << a.message;

  // Still serving: a good request, gzip-compressed, is accepted (an empty ExportMetricsServiceResponse: no partial
  // success) and forwarded with its points.
  a = call(proc.grpc_target, kMetricsExport, good, /*gzip=*/true);
  ASSERT_EQ(a.code, 0) << a.message;
  EXPECT_TRUE(a.body.empty());
  json data = rx.next("metrics");
  ASSERT_FALSE(data.is_null());
  EXPECT_EQ(data["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["gauge"]["dataPoints"].size(), 3u);

  // Counted before the answers went out. (The plain oversized call never reached the service: gRPC refused it.)
  auto metrics = metrics_of(proc);
  for (const char* line : {"gcm_slurm_processor_bad_requests_total{transport=\"grpc\",code=\"INVALID_ARGUMENT\"} 1",
                           "gcm_slurm_processor_bad_requests_total{transport=\"grpc\",code=\"RESOURCE_EXHAUSTED\"} 1",
                           "gcm_slurm_processor_requests_total{signal=\"metrics\",transport=\"grpc\"} 3",
                           "gcm_slurm_processor_bad_requests_total{transport=\"grpc\",code=\"UNIMPLEMENTED\"} 1",
                           "gcm_slurm_processor_received_total{signal=\"metrics\"} 3"})
    EXPECT_TRUE(has_line(metrics, line)) << line << "\n" << metrics;
  EXPECT_EQ(proc.stop(), 0);
  std::filesystem::remove_all(dir);
}

TEST(SlurmProcessorGrpc, AFullQueueIsUnavailableWhichClientsRetry) {
  auto dir = temp_dir("slurm-processor-grpc-full");
  // The downstream is a port nobody listens on; no spool and a 10 KiB queue fill quickly.
  std::string downstream = "http://127.0.0.1:" + std::to_string(free_port());
  ProcessorProcess proc(dir, {"--grpc-listen", "127.0.0.1:0", "--downstream", downstream, "--attribution",
                              "slurmd-local", "--scontrol", "/bin/false", "--batch-size", "10", "--queue-size", "0.01",
                              "--retry-initial-backoff", "5", "--retry-max-backoff", "5"});
  std::string body = gauge_request(100);
  GrpcAnswer a;
  int ok = 0;
  for (int i = 0; i < 200; ++i) {
    a = call(proc.grpc_target, kMetricsExport, body);
    if (a.code != 0) break;
    ++ok;
  }
  EXPECT_EQ(a.code, 14) << "after " << ok << " accepted requests: " << a.message;
  EXPECT_NE(a.message.find("queue"), std::string::npos) << a.message;
  auto metrics = metrics_of(proc);
  EXPECT_TRUE(has_line(metrics, "gcm_slurm_processor_bad_requests_total{transport=\"grpc\",code=\"UNAVAILABLE\"} 1"))
      << metrics;
  EXPECT_TRUE(has_line(metrics, "gcm_slurm_processor_refused_total{signal=\"metrics\"} 100")) << metrics;
  EXPECT_EQ(proc.stop(), 0);
  std::filesystem::remove_all(dir);
}

TEST(SlurmProcessorGrpc, APortInUseIsAStartUpError) {
  auto dir = temp_dir("slurm-processor-grpc-port");
  std::string downstream = "http://127.0.0.1:" + std::to_string(free_port());
  ProcessorProcess first(dir, {"--grpc-listen", "127.0.0.1:0", "--downstream", downstream});
  auto r = run_gcm({"slurm_processor", "--listen", "127.0.0.1:0", "--grpc-listen", first.grpc_target, "--downstream",
                    downstream, "--log-folder", dir},
                   30s);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("cannot listen for gRPC on " + first.grpc_target), std::string::npos) << r.err;
  r = run_gcm({"slurm_processor", "--grpc-listen", "4317", "--downstream", downstream, "--log-folder", dir}, 30s);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("Invalid value for '--grpc-listen': '4317'"), std::string::npos) << r.err;
  EXPECT_EQ(first.stop(), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcm::testing
