// Rendering throughput of the sinks' encoders on 10 000 GPU-like series, with nlohmann::json's dump of the same
// records as the baseline measured in the same run (ratios are printed by scripts/bench.sh).
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "core/json.h"
#include "otlp/encode.h"
#include "sinks/prometheus_store.h"

namespace {

using namespace gcm;

const Schema& schema() {
  static Schema s = [] {
    Schema x;
    x.name = "BenchGpu";
    x.metric_prefix = "gpu";
    x.data_type = DataType::Metric;
    x.fields = {{"hostname", FieldType::String, FieldRole::Identity},
                {"gpu", FieldType::Int, FieldRole::Identity},
                {"uuid", FieldType::String, FieldRole::Identity},
                {"job_id", FieldType::String, FieldRole::Attribute},
                {"temperature", FieldType::Double, FieldRole::Gauge, "celsius"},
                {"power_draw", FieldType::Double, FieldRole::Gauge, "watts"},
                {"gpu_util", FieldType::Int, FieldRole::Gauge, "percent"},
                {"mem_used", FieldType::Int, FieldRole::Gauge, "bytes"},
                {"xid_errors", FieldType::Int, FieldRole::Counter}};
    return x;
  }();
  return s;
}

// 10 000 series = 1 250 hosts x 8 GPUs.
const std::vector<Record>& records() {
  static std::vector<Record> rs = [] {
    std::vector<Record> out;
    for (int i = 0; i < 10000; ++i) {
      Record r(schema());
      r[0] = "node" + std::to_string(i / 8);
      r[1] = i % 8;
      r[2] = "GPU-" + std::to_string(1000000 + i);
      r[3] = std::to_string(400000 + i / 8);
      r[4] = 30.5 + (i % 50);
      r[5] = 250.25 + (i % 300);
      r[6] = i % 101;
      r[7] = static_cast<int64_t>(i) * 1048576;
      r[8] = i % 3;
      out.push_back(std::move(r));
    }
    return out;
  }();
  return rs;
}

void BM_JsonLinesCompact(benchmark::State& state) {
  std::string out;
  for (auto _ : state) {
    out.clear();
    for (const auto& r : records()) {
      JsonWriter(out, JsonStyle::Compact).record(r, true);
      out.push_back('\n');
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * 10000);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(out.size()));
}
BENCHMARK(BM_JsonLinesCompact);

void BM_StdoutPythonForm(benchmark::State& state) {
  std::string out;
  for (auto _ : state) {
    out.clear();
    out.push_back('[');
    for (const auto& r : records()) {
      if (out.size() > 1) out.append(", ");
      JsonWriter(out, JsonStyle::Python).record(r, true);
    }
    out.append("]\n");
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_StdoutPythonForm);

// Baseline: the same records through nlohmann::json (a DOM per record, then dump).
void BM_BaselineNlohmannJsonLines(benchmark::State& state) {
  std::string out;
  for (auto _ : state) {
    out.clear();
    for (const auto& r : records()) {
      nlohmann::json j;
      for (size_t i = 0; i < r.values.size(); ++i) {
        const Value& v = r.values[i];
        const std::string& k = r.schema->fields[i].name;
        if (v.is_string())
          j[k] = v.as_string();
        else if (v.is_int())
          j[k] = v.as_int();
        else if (v.is_double())
          j[k] = v.as_double();
      }
      out += j.dump();
      out.push_back('\n');
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_BaselineNlohmannJsonLines);

void BM_OtlpMetricsProtobuf(benchmark::State& state) {
  std::string out;
  for (auto _ : state) {
    otlp::MetricsBuilder b({{"service.name", Value("gcm")}});
    for (const auto& r : records()) b.add(r, 1700000000);
    out = b.request().SerializeAsString();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * 10000);
  state.counters["bytes_per_request"] = static_cast<double>(out.size());
}
BENCHMARK(BM_OtlpMetricsProtobuf);

void BM_OtlpLogsProtobuf(benchmark::State& state) {
  std::string out;
  for (auto _ : state) {
    otlp::LogsBuilder b({{"service.name", Value("gcm")}});
    for (const auto& r : records()) b.add(r, 1700000000, 1);
    out = b.request().SerializeAsString();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_OtlpLogsProtobuf);

void BM_PrometheusUpdate(benchmark::State& state) {
  PrometheusStore store;
  for (auto _ : state) {
    store.begin_round(schema());
    for (const auto& r : records()) store.add(r);
    store.end_round(schema());
  }
  state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_PrometheusUpdate);

void BM_PrometheusRender(benchmark::State& state) {
  PrometheusStore store;
  store.begin_round(schema());
  for (const auto& r : records()) store.add(r);
  store.end_round(schema());
  std::string text;
  for (auto _ : state) {
    text = store.render();
    benchmark::DoNotOptimize(text.data());
  }
  state.SetItemsProcessed(state.iterations() * 10000);
  state.counters["series"] = static_cast<double>(store.series_count());
  state.counters["bytes"] = static_cast<double>(text.size());
}
BENCHMARK(BM_PrometheusRender);

}  // namespace

BENCHMARK_MAIN();
