// `gcm slurm_processor` as a process between the project's OTLP exporter and a real OTLP receiver
// (@elastic/mockotlpserver): GPU metrics of fake GPUs running real Slurm jobs on the live testbed arrive carrying
// each GPU's job; a downstream outage loses nothing and duplicates nothing; bad input gets the OTLP/HTTP status it
// should and the service keeps serving.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "attribution/process_environ.h"
#include "attribution/slurmctld_jobs.h"
#include "attribution/slurmd_local.h"
#include "core/http_client.h"
#include "helpers.h"
#include "metrics_service.pb.h"
#include "slurm_processor_process.h"
#include "status.pb.h"

namespace gcm::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using MetricsReq = opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest;

using Receiver = OtlpReceiverProcess;
using Processor = ProcessorProcess;

HttpResponse post(HttpClient& http, const std::string& url, const std::string& body, const std::string& ct) {
  return http.post(url, body, {"Content-Type: " + ct}, 10s);
}

// A batch job that sleeps on node3 with one GPU; cancelled when the object goes.
struct Job {
  int64_t id = 0;
  uint32_t pid = 0;
  std::vector<unsigned> gpus;
  explicit Job(const std::string& name) {
    id = std::stoll(run_ok({"sbatch", "--parsable", "-w", "node3", "-p", "gpu", "--gres=gpu:1", "-J", name, "-o",
                            "/dev/null", "--wrap", "exec sleep 300"}));
  }
  ~Job() {
    try {
      run_ok({"scancel", std::to_string(id)});
    } catch (...) {
    }
  }
};

TEST(SlurmProcessor, GpuMetricsFromOurExporterArriveWithEachGpusJob) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  ASSERT_FALSE(find_executable("node").empty()) << "node is not installed";
  Job a("proc-a"), b("proc-b");
  ASSERT_TRUE(eventually(
      [&] {
        std::string listing;
        try {
          listing = run_ok({"scontrol", "listpids", "*", "node3"});
        } catch (...) {
          return false;
        }
        for (Job* j : {&a, &b}) {
          j->gpus.clear();
          for (auto [pid, job] : parse_listpids(listing)) {
            if (job != j->id) continue;
            if (auto env = read_process_environ("/proc", pid)) {
              j->gpus = job_gpus_from_environ(*env);
              j->pid = pid;
              if (!j->gpus.empty()) break;
            }
          }
          if (j->gpus.empty()) return false;
        }
        return true;
      },
      60s))
      << "jobs " << a.id << " and " << b.id << " did not start on node3";
  ASSERT_EQ(a.gpus.size(), 1u);
  ASSERT_EQ(b.gpus.size(), 1u);

  auto dir = temp_dir("slurm-processor");
  json gpus = json::array();
  for (unsigned i = 0; i < 2; ++i)
    gpus.push_back({{"uuid", "GPU-node3-" + std::to_string(i)}, {"utilization", {{"gpu", 50}, {"memory", 5}}}});
  std::ofstream(dir + "/scenario.json") << json{{"devices", gpus}}.dump();
  std::vector<std::string> env = {"GCM_FAKE_NVML_SCENARIO=" + dir + "/scenario.json",
                                  std::string("GCM_NVML_LIBRARY=") + GCM_FAKE_NVML};
  Receiver rx(dir);
  // The processor attributes for node3 from slurmd (scontrol listpids + the jobs' environments), slurmctld for the
  // job metadata slurmd does not give: both sources in order.
  Processor proc(dir, {"--downstream", rx.url, "--attribution", "slurmd-local,slurmctld", "--slurm-node", "node3",
                       "--batch-timeout", "0.05"});
  auto r = run_gcm({"nvml_monitor", "--once", "--push-interval", "0.1", "--collect-interval", "0.1", "--sink", "otel",
                    "-o", "otel_endpoint=" + proc.url, "-o", "protocol=http/protobuf", "--log-folder", dir},
                   60s, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  JobsByGpu seen = jobs_by_gpu(rx);
  ASSERT_GT(seen.points, 0u);
  EXPECT_EQ(seen.job_ids[std::to_string(a.gpus[0])], std::set<std::string>{std::to_string(a.id)});
  EXPECT_EQ(seen.job_ids[std::to_string(b.gpus[0])], std::set<std::string>{std::to_string(b.id)});
  EXPECT_EQ(proc.stop(), 0);
  std::filesystem::remove_all(dir);
}

// A central processor gets other hosts' telemetry: their jobs come from one `scontrol show job -d` of the whole
// cluster (scontrol listpids would only answer on the node itself).
TEST(SlurmProcessor, AnotherHostsGpuPointsGetTheirJobsFromTheClusterTable) {
  if (!testbed_up()) GTEST_SKIP() << "the Slurm testbed is not running (make test starts it; see tests/testbed/)";
  ASSERT_FALSE(find_executable("node").empty()) << "node is not installed";
  Job job("proc-remote");
  std::map<unsigned, std::vector<JobInfo>> on_node3;
  ASSERT_TRUE(eventually(
      [&] {
        try {
          on_node3 = gpus_from_job_blocks(run_ok({"scontrol", "show", "job", "-d", std::to_string(job.id)}), "node3");
        } catch (...) {
          return false;
        }
        return !on_node3.empty();
      },
      60s))
      << "job " << job.id << " did not start on node3";
  unsigned gpu = on_node3.begin()->first;

  auto dir = temp_dir("slurm-processor-remote");
  Receiver rx(dir);
  Processor proc(dir, {"--downstream", rx.url, "--attribution", "slurmctld", "--batch-timeout", "0.05"});
  MetricsReq m;
  auto* rm = m.add_resource_metrics();
  auto* host = rm->mutable_resource()->add_attributes();
  host->set_key("host.name");
  host->mutable_value()->set_string_value("node3");
  auto* g = rm->add_scope_metrics()->add_metrics();
  g->set_name("DCGM_FI_DEV_GPU_UTIL");
  for (unsigned i : {gpu, gpu == 0 ? 1u : 0u}) {
    auto* p = g->mutable_gauge()->add_data_points();
    p->set_as_double(50);
    auto* kv = p->add_attributes();
    kv->set_key("gpu");
    kv->mutable_value()->set_string_value(std::to_string(i));
  }
  HttpClient http;
  auto res = post(http, proc.url + "/v1/metrics", m.SerializeAsString(), "application/x-protobuf");
  ASSERT_EQ(res.status, 200) << res.body;
  JobsByGpu seen = jobs_by_gpu(rx);
  ASSERT_EQ(seen.points, 2u);
  EXPECT_EQ(seen.job_ids[std::to_string(gpu)], std::set<std::string>{std::to_string(job.id)});
  EXPECT_NE(seen.job_ids[std::to_string(gpu == 0 ? 1u : 0u)].count(std::to_string(job.id)), 1u);
  auto metrics = http.get(proc.url + "/metrics", 5s).body;
  EXPECT_EQ(metrics.find("gcm_slurm_processor_attribution_cluster_jobs 0\n"), std::string::npos) << metrics;
  EXPECT_EQ(proc.stop(), 0);
  std::filesystem::remove_all(dir);
}

// Requests of 10 points each, point values 0..n-1, straight to the processor.
std::string numbered_request(int64_t first, int count) {
  MetricsReq m;
  auto* rm = m.add_resource_metrics();
  auto* kv = rm->mutable_resource()->add_attributes();
  kv->set_key("host.name");
  kv->mutable_value()->set_string_value("elsewhere-node");  // no source can attribute it: passes unchanged
  auto* g = rm->add_scope_metrics()->add_metrics();
  g->set_name("seq");
  for (int i = 0; i < count; ++i) g->mutable_gauge()->add_data_points()->set_as_int(first + i);
  return m.SerializeAsString();
}

TEST(SlurmProcessor, ADownstreamOutageLosesNothingAndDuplicatesNothing) {
  ASSERT_FALSE(find_executable("node").empty()) << "node is not installed";
  auto dir = temp_dir("slurm-processor-outage");
  auto rx = std::make_unique<Receiver>(dir);
  int port = rx->port();
  std::string downstream = rx->url;
  Processor proc(dir, {"--downstream", downstream, "--attribution", "slurmd-local", "--scontrol", "/bin/false",
                       "--batch-size", "50", "--batch-timeout", "0.05", "--queue-size", "0.01", "--spool-dir",
                       dir + "/spool", "--retry-initial-backoff", "0.05", "--retry-max-backoff", "0.2"});
  HttpClient http;
  constexpr int kRequests = 300, kPerRequest = 10;
  std::multiset<int64_t> seen;
  auto collect = [&](Receiver& r, std::chrono::milliseconds first_wait) {
    for (json data = r.next("metrics", first_wait); !data.is_null(); data = r.next("metrics", 2s))
      for (const auto& rm : data["resourceMetrics"])
        for (const auto& sm : rm["scopeMetrics"])
          for (const auto& m : sm["metrics"])
            for (const auto& p : m["gauge"]["dataPoints"])
              seen.insert(p["asInt"].is_string() ? std::stoll(p["asInt"].get<std::string>())
                                                 : p["asInt"].get<int64_t>());
  };
  // A third before, a third during and a third after the outage.
  int sent = 0;
  auto send = [&](int n) {
    for (int i = 0; i < n; ++i, ++sent) {
      auto res = post(http, proc.url + "/v1/metrics", numbered_request(int64_t{sent} * kPerRequest, kPerRequest),
                      "application/x-protobuf");
      ASSERT_EQ(res.status, 200) << res.body;
      ASSERT_TRUE(res.body.empty()) << "a partial success: the processor refused points";
    }
  };
  send(kRequests / 3);
  collect(*rx, 10s);
  rx->kill();
  rx.reset();
  RefusedPorts outage({port});
  send(kRequests / 3);
  // The queue (10 KiB) is far smaller than what the outage gathers: it must have spooled.
  ASSERT_TRUE(eventually(
      [&] {
        auto m = http.get(proc.url + "/metrics", 5s);
        return m.body.find("gcm_slurm_processor_spooled_total 0\n") == std::string::npos &&
               m.body.find("gcm_slurm_processor_retried_total 0\n") == std::string::npos;
      },
      30s));
  outage.release();
  rx = std::make_unique<Receiver>(dir, port);
  send(kRequests - 2 * (kRequests / 3));
  ASSERT_TRUE(eventually(
      [&] {
        collect(*rx, 500ms);
        return seen.size() >= static_cast<size_t>(kRequests * kPerRequest);
      },
      60s))
      << seen.size() << " points arrived";
  collect(*rx, 1s);  // anything late would be a duplicate
  EXPECT_EQ(seen.size(), static_cast<size_t>(kRequests * kPerRequest));
  for (int64_t v = 0; v < kRequests * kPerRequest; ++v) EXPECT_EQ(seen.count(v), 1u) << "point " << v;
  // The processor counts a batch once the receiver's answer is in, a moment after the receiver printed it.
  std::string metrics;
  EXPECT_TRUE(eventually(
      [&] {
        metrics = http.get(proc.url + "/metrics", 5s).body;
        return metrics.find("gcm_slurm_processor_forwarded_total 3000\n") != std::string::npos;
      },
      10s))
      << metrics;
  EXPECT_NE(metrics.find("gcm_slurm_processor_dropped_total 0\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("gcm_slurm_processor_received_total{signal=\"metrics\"} 3000\n"), std::string::npos);
  EXPECT_EQ(proc.stop(), 0);
  std::filesystem::remove_all(dir);
}

// The values of the "seq" points of every metrics request the receiver gets until none arrives for 2 s.
std::multiset<int64_t> seq_points(Receiver& rx, std::chrono::milliseconds first_wait) {
  std::multiset<int64_t> seen;
  for (json data = rx.next("metrics", first_wait); !data.is_null(); data = rx.next("metrics", 2s))
    for (const auto& rm : data["resourceMetrics"])
      for (const auto& sm : rm["scopeMetrics"])
        for (const auto& m : sm["metrics"])
          for (const auto& p : m["gauge"]["dataPoints"])
            seen.insert(p["asInt"].is_string() ? std::stoll(p["asInt"].get<std::string>()) : p["asInt"].get<int64_t>());
  return seen;
}

std::optional<double> metric(HttpClient& http, const std::string& url, const std::string& name) {
  std::string page = http.get(url + "/metrics", 5s).body;
  auto at = page.find("\n" + name + " ");
  if (at == std::string::npos) return std::nullopt;
  return std::stod(page.substr(at + name.size() + 2));
}

// What the processor promises with --spool-dir: once it has seen the downstream fail, every request it answers 200
// is on disk first. Killed with SIGKILL in that outage and started again on the same spool (with the receiver back),
// it delivers every point it accepted, none twice; a torn tail left by the crash and a damaged segment are skipped
// and counted, and the processor starts anyway.
TEST(SlurmProcessor, AKill9DuringAnOutageLosesNoAcceptedPoint) {
  ASSERT_FALSE(find_executable("node").empty()) << "node is not installed";
  auto dir = temp_dir("slurm-processor-kill9");
  std::string spool = dir + "/spool";
  int away = free_port();
  RefusedPorts downstream_down({away});  // connects refused for the whole first run
  std::vector<std::string> common = {"--attribution", "slurmd-local", "--scontrol", "/bin/false", "--batch-size",
                                     "50", "--batch-timeout", "0.05", "--spool-dir", spool,
                                     "--retry-initial-backoff", "0.05", "--retry-max-backoff", "0.2"};
  auto args = [&](const std::string& downstream) {
    std::vector<std::string> a = {"--downstream", downstream};
    a.insert(a.end(), common.begin(), common.end());
    return a;
  };
  HttpClient http;
  constexpr int kPerRequest = 10;
  int sent = 0;
  auto send = [&](Processor& proc, int n) {
    for (int i = 0; i < n; ++i, ++sent) {
      auto res = post(http, proc.url + "/v1/metrics", numbered_request(int64_t{sent} * kPerRequest, kPerRequest),
                      "application/x-protobuf");
      ASSERT_EQ(res.status, 200) << res.body;
    }
  };
  {
    Processor first(dir, args("http://127.0.0.1:" + std::to_string(away)));
    // Taken into memory until the first send fails; then moved to the spool.
    send(first, 20);
    ASSERT_TRUE(eventually(
        [&] {
          return metric(http, first.url, "gcm_slurm_processor_retried_total").value_or(0) > 0 &&
                 metric(http, first.url, "gcm_slurm_processor_spool_items").value_or(0) == 20 * kPerRequest;
        },
        30s))
        << "the outage is seen and what was taken is on disk";
    // The outage is known: each of these is written to the spool before its 200.
    send(first, 100);
    ASSERT_EQ(first.kill9(), 128 + SIGKILL);
  }
  std::vector<std::filesystem::path> segments;
  for (const auto& e : std::filesystem::directory_iterator(spool))
    if (e.path().filename().string().rfind("seg-", 0) == 0) segments.push_back(e.path());
  std::sort(segments.begin(), segments.end());
  ASSERT_FALSE(segments.empty());
  {
    // A frame the crash cut off after its first bytes, at the end of the last segment.
    std::ofstream torn(segments.back(), std::ios::app | std::ios::binary);
    torn.write("GSP1\x10\x00\x00", 7);
  }
  {
    // A later segment whose only frame's payload was damaged on disk: its header is whole, its CRC fails.
    std::string bytes;
    {
      std::ifstream in(segments.front(), std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    ASSERT_GT(bytes.size(), 64u);
    constexpr uint64_t kLaterSeq = 1000000;  // after every entry the first run wrote (bytes 17-24 of a frame)
    for (int i = 0; i < 8; ++i) bytes[17 + i] = static_cast<char>((kLaterSeq >> (8 * i)) & 0xff);
    bytes[50] = static_cast<char>(bytes[50] ^ 0x5a);
    std::ofstream out(spool + "/seg-00000000000001000000.log", std::ios::binary);
    out.write(bytes.data(), 60);  // the damaged first frame and no more: nothing of it may be sent
  }
  downstream_down.release();
  Receiver rx(dir);
  Processor second(dir, args(rx.url));
  std::multiset<int64_t> seen;
  ASSERT_TRUE(eventually(
      [&] {
        auto more = seq_points(rx, 500ms);
        seen.insert(more.begin(), more.end());
        return seen.size() >= static_cast<size_t>(sent * kPerRequest);
      },
      60s))
      << seen.size() << " of " << sent * kPerRequest << " points arrived";
  auto late = seq_points(rx, 1s);  // anything more would be a duplicate
  seen.insert(late.begin(), late.end());
  EXPECT_EQ(seen.size(), static_cast<size_t>(sent * kPerRequest));
  for (int64_t v = 0; v < int64_t{sent} * kPerRequest; ++v) EXPECT_EQ(seen.count(v), 1u) << "point " << v;
  EXPECT_EQ(metric(http, second.url, "gcm_slurm_processor_spool_corrupt_total"), 2) << "the torn tail and the damaged frame";
  EXPECT_EQ(metric(http, second.url, "gcm_slurm_processor_unspooled_total"), sent * kPerRequest);
  EXPECT_EQ(metric(http, second.url, "gcm_slurm_processor_dropped_total"), 0);
  EXPECT_EQ(second.stop(), 0);
  std::filesystem::remove_all(dir);
}

TEST(SlurmProcessor, BadInputGetsItsStatusAndTheServiceKeepsServing) {
  ASSERT_FALSE(find_executable("node").empty()) << "node is not installed";
  auto dir = temp_dir("slurm-processor-bad");
  Receiver rx(dir);
  Processor proc(dir, {"--downstream", rx.url, "--attribution", "slurmd-local", "--scontrol", "/bin/false",
                       "--max-request-size", "1", "--batch-timeout", "0.01"});
  HttpClient http;
  std::string good = numbered_request(0, 3);
  auto expect_status = [&](const HttpResponse& res, long status, const std::string& what) {
    EXPECT_EQ(res.status, status) << what << ": " << res.body;
  };
  auto res = post(http, proc.url + "/v1/metrics", good.substr(0, good.size() - 4), "application/x-protobuf");
  expect_status(res, 400, "truncated protobuf");
  gcm::otlp::Status st;
  ASSERT_TRUE(st.ParseFromString(res.body));
  EXPECT_NE(st.message().find("ExportMetricsServiceRequest"), std::string::npos) << st.message();
  std::mt19937 rng(42);
  for (int i = 0; i < 20; ++i) {
    std::string noise(64 + rng() % 4096, '\0');
    for (char& c : noise) c = static_cast<char>(rng());
    res = post(http, proc.url + "/v1/logs", noise, "application/x-protobuf");
    // Random bytes may happen to be a valid message made of unknown fields: then it is accepted as such.
    EXPECT_TRUE(res.status == 400 || res.status == 200) << res.status;
  }
  expect_status(post(http, proc.url + "/v1/metrics", good, "text/plain"), 415, "text/plain");
  expect_status(post(http, proc.url + "/v1/metrics", "{", "application/json"), 400, "bad JSON");
  expect_status(post(http, proc.url + "/v1/traces", std::string(2 << 20, 'x'), "application/x-protobuf"), 413,
                "2 MiB body over a 1 MiB limit");
  expect_status(post(http, proc.url + "/v1/nothing", good, "application/x-protobuf"), 404, "unknown path");
  expect_status(http.get(proc.url + "/v1/metrics", 5s), 405, "GET of an export path");
  // Still serving: a good request is accepted and forwarded with its points.
  res = post(http, proc.url + "/v1/metrics", good, "application/x-protobuf");
  expect_status(res, 200, "good request");
  json data = rx.next("metrics");
  ASSERT_FALSE(data.is_null());
  EXPECT_EQ(data["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["gauge"]["dataPoints"].size(), 3u);
  res = http.get(proc.url + "/health", 5s);
  expect_status(res, 200, "health");
  EXPECT_EQ(json::parse(res.body)["status"], "ok");
  auto metrics = http.get(proc.url + "/metrics", 5s).body;
  EXPECT_NE(metrics.find("gcm_slurm_processor_bad_requests_total{transport=\"http\",code=\"413\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("gcm_slurm_processor_bad_requests_total{transport=\"http\",code=\"415\"} 1\n"),
            std::string::npos)
      << metrics;
  // Of the protobuf metrics requests, only the truncated one left the wire rewriter for the message path.
  EXPECT_NE(metrics.find("gcm_slurm_processor_message_path_requests_total{signal=\"metrics\"} 1\n"), std::string::npos)
      << metrics;
  EXPECT_EQ(proc.stop(), 0);
  std::filesystem::remove_all(dir);
}

TEST(SlurmProcessor, AFullQueueAnswers503WithRetryAfterWhichClientsRetry) {
  auto dir = temp_dir("slurm-processor-full");
  // The downstream is a port nobody listens on; no spool and a 10 KiB queue fill quickly.
  std::string downstream = "http://127.0.0.1:" + std::to_string(free_port());
  Processor proc(
      dir, {"--downstream", downstream, "--attribution", "slurmd-local", "--scontrol", "/bin/false", "--batch-size",
            "10", "--queue-size", "0.01", "--retry-initial-backoff", "5", "--retry-max-backoff", "5"});
  HttpClient http;
  std::string body = numbered_request(0, 100);
  HttpResponse res;
  int ok = 0;
  for (int i = 0; i < 200; ++i) {
    res = post(http, proc.url + "/v1/metrics", body, "application/x-protobuf");
    if (res.status != 200) break;
    ++ok;
  }
  ASSERT_EQ(res.status, 503) << "after " << ok << " accepted requests: " << res.body;
  EXPECT_EQ(res.header("retry-after"), "5");
  gcm::otlp::Status st;
  ASSERT_TRUE(st.ParseFromString(res.body));
  EXPECT_EQ(st.code(), 14);  // UNAVAILABLE
  EXPECT_NE(st.message().find("queue"), std::string::npos) << st.message();
  // JSON clients get the same answer in JSON (the same 100 points: a smaller request could still fit).
  json points = json::array();
  for (int i = 0; i < 100; ++i) points.push_back({{"asInt", std::to_string(i)}});
  json req = {{"resourceMetrics",
               {{{"scopeMetrics", {{{"metrics", {{{"name", "seq"}, {"gauge", {{"dataPoints", points}}}}}}}}}}}}};
  res = post(http, proc.url + "/v1/metrics", req.dump(), "application/json");
  EXPECT_EQ(res.status, 503) << res.body;
  EXPECT_EQ(json::parse(res.body)["code"], 14) << res.body;
  auto metrics = http.get(proc.url + "/metrics", 5s).body;
  EXPECT_NE(metrics.find("gcm_slurm_processor_refused_total{signal=\"metrics\"} 200\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("gcm_slurm_processor_dropped_total 0\n"), std::string::npos) << metrics;
  // A protobuf body that alone would not fit what is left of the queue is refused before it is read further than its
  // framing (which counts its 300 points, received and refused): a point whose string is not UTF-8, which reading
  // would answer 400, is not seen.
  std::string big = numbered_request(0, 300);
  ASSERT_LT(big.size(), 10485u) << "smaller than the queue: a body larger than the queue is answered 413";
  std::string name = "\n\x03seq";  // Metric.name, to spoil in place
  ASSERT_NE(big.find(name), std::string::npos);
  std::string spoilt = big;
  spoilt.replace(spoilt.find(name), name.size(), "\n\x03s\xff\xfe");
  res = post(http, proc.url + "/v1/metrics", spoilt, "application/x-protobuf");
  EXPECT_EQ(res.status, 503) << res.body;
  EXPECT_EQ(res.header("retry-after"), "5");
  metrics = http.get(proc.url + "/metrics", 5s).body;
  EXPECT_NE(metrics.find("gcm_slurm_processor_refused_total{signal=\"metrics\"} 500\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("gcm_slurm_processor_bad_requests_total{transport=\"http\",code=\"400\"} 0\n"),
            std::string::npos)
      << metrics;
  EXPECT_EQ(proc.stop(), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gcm::testing
