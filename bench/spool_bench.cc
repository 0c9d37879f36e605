// The agent's spool: append rate (each append fdatasync'ed, as in production) and replay rate (front, parse back
// into the request as the sender does, pop with its durable ack) for one 30 s window of 8 GPUs. The directory is
// $GCM_BENCH_SPOOL_DIR or a new one under /var/tmp: the figures are the disk's, so say which disk with them.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "otlp/spool.h"
#include "metrics_service.pb.h"
#include "otlp/encode.h"

namespace {

using namespace gcm;
using gcm::otlp::Spool;

const Schema& schema() {
  static Schema s = [] {
    Schema x;
    x.name = "BenchAgentGpu";
    x.metric_prefix = "gpu";
    x.data_type = DataType::Metric;
    x.fields = {{"gpu", FieldType::Int, FieldRole::Identity},
                {"uuid", FieldType::String, FieldRole::Identity},
                {"job_id", FieldType::String, FieldRole::Attribute}};
    for (int f = 0; f < 12; ++f)
      x.fields.push_back({"field_" + std::to_string(f), FieldType::Double, FieldRole::Gauge});
    return x;
  }();
  return s;
}

// One window: 8 GPUs x 12 gauges, sampled every 5 s over 30 s (6 samples): 576 points, about 46 KB encoded.
const std::string& window_request() {
  static std::string bytes = [] {
    otlp::MetricsBuilder b({{"service.name", Value("gcm")}, {"host.name", Value("node0001")}});
    for (int t = 0; t < 6; ++t)
      for (int g = 0; g < 8; ++g) {
        Record r(schema());
        r[0] = g;
        r[1] = "GPU-1f2e3d4c-" + std::to_string(g) + "-0000-0000-abcdef012345";
        r[2] = "123456" + std::to_string(g);
        for (int f = 0; f < 12; ++f) r[3 + f] = 0.5 * f + g + t;
        b.add(r, 1700000000 + 5 * t);
      }
    return b.request().SerializeAsString();
  }();
  return bytes;
}

std::string bench_dir() {
  const char* env = std::getenv("GCM_BENCH_SPOOL_DIR");
  std::string tmpl = std::string(env && *env ? env : "/var/tmp") + "/gcm-spool-bench-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl);
  return tmpl;
}

void BM_SpoolAppendWindow(benchmark::State& state) {
  std::string dir = bench_dir();
  const std::string& w = window_request();
  {
    auto spool = Spool::open(dir + "/spool", uint64_t{1} << 30);
    for (auto _ : state) benchmark::DoNotOptimize(spool->append(gcm::otlp::Signal::Metrics, 576, w));
  }
  std::filesystem::remove_all(dir);
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * w.size()));
  state.counters["window_bytes"] = static_cast<double>(w.size());
}

void BM_SpoolReplayWindow(benchmark::State& state) {
  std::string dir = bench_dir();
  const std::string& w = window_request();
  constexpr int kBacklog = 120;  // an hour's outage
  {
    auto spool = Spool::open(dir + "/spool", uint64_t{1} << 30);
    opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest req;
    int left = 0;
    for (auto _ : state) {
      if (left == 0) {
        state.PauseTiming();
        for (int i = 0; i < kBacklog; ++i) spool->append(gcm::otlp::Signal::Metrics, 576, w);
        left = kBacklog;
        state.ResumeTiming();
      }
      auto e = spool->front();
      req.ParseFromString(e->bytes);
      benchmark::DoNotOptimize(req);
      spool->pop_front(e->seq);
      --left;
    }
  }
  std::filesystem::remove_all(dir);
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * w.size()));
  state.counters["window_bytes"] = static_cast<double>(w.size());
}

BENCHMARK(BM_SpoolAppendWindow)->UseRealTime();
BENCHMARK(BM_SpoolReplayWindow)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
