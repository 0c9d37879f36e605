// slurm_processor's request path per core: receive + enrich + re-encode of OTLP metrics as dcgm-exporter sends them
// (8 GPUs x 20 metrics, each point with gpu, UUID, device, modelName, Hostname), and logs and traces, through both
// decoders: /messages (decode into protobuf messages, enrich, encode) and /wire (rewrite the bytes). Baselines in
// the same run: the same without enrichment (what a pass-through costs), and protobuf decoding alone.
// allocs_per_item counts heap allocations (operator new) per item; arena blocks are reused, so it is near 0 for both.
#include <benchmark/benchmark.h>

#include <malloc.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "alloc_count.h"
#include "cluster_job_table.h"

#include "attribution/slurmctld_jobs.h"
#include "core/subprocess.h"

#include "processor/enrich.h"
#include "processor/node_jobs.h"
#include "processor/otlp_request.h"

namespace {

using namespace gcm;
using namespace gcm::processor;
namespace pbc = opentelemetry::proto::common::v1;

void put(google::protobuf::RepeatedPtrField<pbc::KeyValue>* a, const std::string& k, const std::string& v) {
  auto* kv = a->Add();
  kv->set_key(k);
  kv->mutable_value()->set_string_value(v);
}

std::shared_ptr<const NodeJobs> jobs() {
  static auto t = [] {
    std::map<unsigned, std::vector<JobInfo>> m;
    for (unsigned g = 0; g < 8; ++g) {
      JobInfo j;
      j.job_id = 1000 + g / 2;
      j.job_name = "train-" + std::to_string(g / 2);
      j.job_user = "user" + std::to_string(g / 4);
      j.job_qos = "normal";
      j.job_partition = "gpu";
      j.job_account = "research";
      j.job_num_nodes = 4;
      m[g].push_back(j);
    }
    return std::make_shared<const NodeJobs>(node_jobs_from(m));
  }();
  return t;
}

// `hosts` resources of 8 GPUs x 20 gauges, plus one host-level gauge per host (no gpu: list attributes).
std::string metrics_body(int hosts) {
  opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest req;
  for (int h = 0; h < hosts; ++h) {
    auto* rm = req.add_resource_metrics();
    put(rm->mutable_resource()->mutable_attributes(), "service.name", "dcgm-exporter");
    auto* sm = rm->add_scope_metrics();
    for (int m = 0; m < 20; ++m) {
      auto* metric = sm->add_metrics();
      metric->set_name("DCGM_FI_DEV_METRIC_" + std::to_string(m));
      for (int g = 0; g < 8; ++g) {
        auto* p = metric->mutable_gauge()->add_data_points();
        p->set_time_unix_nano(1700000000000000000ull);
        p->set_as_double(42.5 + g);
        put(p->mutable_attributes(), "gpu", std::to_string(g));
        put(p->mutable_attributes(), "UUID", "GPU-0000000" + std::to_string(g) + "-aaaa-bbbb-cccc-dddddddddddd");
        put(p->mutable_attributes(), "device", "nvidia" + std::to_string(g));
        put(p->mutable_attributes(), "modelName", "NVIDIA H100 80GB HBM3");
        put(p->mutable_attributes(), "Hostname", "node" + std::to_string(h));
      }
    }
    auto* host_metric = sm->add_metrics();
    host_metric->set_name("node_load1");
    host_metric->mutable_gauge()->add_data_points()->set_as_double(1.5);
  }
  return req.SerializeAsString();
}

std::string logs_body(int records) {
  opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest req;
  auto* sl = req.add_resource_logs()->add_scope_logs();
  for (int i = 0; i < records; ++i) {
    auto* r = sl->add_log_records();
    r->set_time_unix_nano(1700000000000000000ull);
    r->mutable_body()->set_string_value("Xid 79: GPU has fallen off the bus");
    put(r->mutable_attributes(), "gpu", std::to_string(i % 8));
    put(r->mutable_attributes(), "severity", "error");
  }
  return req.SerializeAsString();
}

std::string traces_body(int spans) {
  opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest req;
  auto* ss = req.add_resource_spans()->add_scope_spans();
  for (int i = 0; i < spans; ++i) {
    auto* s = ss->add_spans();
    s->set_trace_id(std::string(16, '\x11'));
    s->set_span_id(std::string(8, static_cast<char>(i)));
    s->set_name("allreduce");
    s->set_start_time_unix_nano(1700000000000000000ull);
    s->set_end_time_unix_nano(1700000000100000000ull);
    put(s->mutable_attributes(), "gpu", std::to_string(i % 8));
    put(s->mutable_attributes(), "rank", std::to_string(i));
  }
  return req.SerializeAsString();
}

HostLookup with_jobs() {
  auto t = jobs();
  return [t](std::string_view) { return t; };
}
HostLookup no_jobs() {
  return [](std::string_view) { return std::shared_ptr<const NodeJobs>(); };
}

// How the output buffer is had: handed from one request to the next as the service does (Recycled), or a new one
// for each request (Fresh, what the service did before: the baseline of the recycling).
enum class Buffer { Recycled, Fresh };

void run(benchmark::State& state, Signal signal, const std::string& body, const HostLookup& lookup, Decoder decoder,
         Buffer buffer = Buffer::Recycled) {
  uint64_t items = 0;
  size_t out_bytes = 0;
  uint64_t allocations = heap_allocations();
  std::string kept;
  for (auto _ : state) {
    RequestResult r = process_request(signal, "application/x-protobuf", "", body, 1 << 30, lookup, decoder,
                                      buffer == Buffer::Recycled ? std::move(kept) : std::string());
    if (r.status != 200) state.SkipWithError(r.message.c_str());
    items += r.items;
    out_bytes = r.forward.size();
    benchmark::DoNotOptimize(r.forward.data());
    if (buffer == Buffer::Recycled) recycle_forward_buffer(kept, std::move(r.forward));
  }
  state.SetItemsProcessed(static_cast<int64_t>(items));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
  state.counters["bytes_in"] = static_cast<double>(body.size());
  state.counters["bytes_out"] = static_cast<double>(out_bytes);
  state.counters["allocs_per_item"] = items ? static_cast<double>(heap_allocations() - allocations) / items : 0;
}

// 50 hosts x 161 points = 8 050 points per request (a typical collector batch).
void BM_MetricsEnriched(benchmark::State& state, Decoder decoder) {
  static const std::string body = metrics_body(static_cast<int>(state.range(0)));
  run(state, Signal::Metrics, body, with_jobs(), decoder);
}
BENCHMARK_CAPTURE(BM_MetricsEnriched, messages, Decoder::Messages)->Arg(50);
BENCHMARK_CAPTURE(BM_MetricsEnriched, wire, Decoder::Wire)->Arg(50);

// The wire path with a new output buffer per request: the baseline of the recycled one above.
void BM_MetricsEnrichedFreshBufferBaseline(benchmark::State& state) {
  static const std::string body = metrics_body(static_cast<int>(state.range(0)));
  run(state, Signal::Metrics, body, with_jobs(), Decoder::Wire, Buffer::Fresh);
}
BENCHMARK(BM_MetricsEnrichedFreshBufferBaseline)->Arg(50);

void BM_MetricsPassThroughBaseline(benchmark::State& state, Decoder decoder) {
  static const std::string body = metrics_body(static_cast<int>(state.range(0)));
  run(state, Signal::Metrics, body, no_jobs(), decoder);
}
BENCHMARK_CAPTURE(BM_MetricsPassThroughBaseline, messages, Decoder::Messages)->Arg(50);
BENCHMARK_CAPTURE(BM_MetricsPassThroughBaseline, wire, Decoder::Wire)->Arg(50);

void BM_MetricsDecodeOnlyBaseline(benchmark::State& state) {
  static const std::string body = metrics_body(static_cast<int>(state.range(0)));
  uint64_t items = 0;
  for (auto _ : state) {
    google::protobuf::Arena arena;
    auto* req = google::protobuf::Arena::CreateMessage<
        opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest>(&arena);
    req->ParseFromString(body);
    items += count_items(*req);
  }
  state.SetItemsProcessed(static_cast<int64_t>(items));
}
BENCHMARK(BM_MetricsDecodeOnlyBaseline)->Arg(50);

void BM_LogsEnriched(benchmark::State& state, Decoder decoder) {
  static const std::string body = logs_body(8000);
  run(state, Signal::Logs, body, with_jobs(), decoder);
}
BENCHMARK_CAPTURE(BM_LogsEnriched, messages, Decoder::Messages);
BENCHMARK_CAPTURE(BM_LogsEnriched, wire, Decoder::Wire);

void BM_TracesEnriched(benchmark::State& state, Decoder decoder) {
  static const std::string body = traces_body(8000);
  run(state, Signal::Traces, body, with_jobs(), decoder);
}
BENCHMARK_CAPTURE(BM_TracesEnriched, messages, Decoder::Messages);
BENCHMARK_CAPTURE(BM_TracesEnriched, wire, Decoder::Wire);

// The cluster's job table, read again at every refresh (--refresh-interval, 5 s by default) for telemetry of other
// hosts: `scontrol show job -d` of a 12 500-node cluster (19 200 jobs, 17 MB, printed by `cat` of a file), parsed
// and turned into the table of each node's GPUs and jobs. The reads alternate between two tables that differ in
// every 50th job's name (2 %: what changes in a few seconds on a busy cluster), each built from the one before as
// the processor does. Baselines in the same run: each table built from scratch (what every refresh did before),
// and the command's output read through the same pipe and split into lines, nothing parsed.
struct FakeScontrol {
  std::string dir, script[2];
  int jobs = 0;
  uint64_t bytes = 0;
  FakeScontrol() {
    dir = std::filesystem::temp_directory_path() / ("gcm-processor-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    for (int t = 0; t < 2; ++t) {
      std::string table = dir + "/jobs-d-" + std::to_string(t) + ".txt";
      jobs = gcm::bench::write_job_table(table, 12500, t == 0 ? 0 : 50);
      bytes = std::filesystem::file_size(table);
      script[t] = dir + "/scontrol-" + std::to_string(t);
      std::ofstream(script[t]) << "#!/bin/sh\nexec cat " << table << "\n";
      std::filesystem::permissions(script[t], std::filesystem::perms::owner_all);
    }
  }
  ~FakeScontrol() { std::filesystem::remove_all(dir); }
};
const FakeScontrol& fake_scontrol() {
  static const FakeScontrol f;
  return f;
}

enum class Refresh { FromPrevious, FromScratch };

void refresh_tables(benchmark::State& state, Refresh how) {
  const FakeScontrol& f = fake_scontrol();
  ClusterSizes sizes;
  ClusterNodeJobs table;
  size_t reads = 0, kept = 0;
  for (auto _ : state) {
    ClusterJobs jobs = attribute_cluster(f.script[reads++ % 2], std::chrono::seconds(60),
                                         how == Refresh::FromPrevious ? sizes : ClusterSizes{});
    ClusterNodeJobs next = cluster_node_jobs(jobs, how == Refresh::FromPrevious && !table.empty() ? &table : nullptr);
    kept = 0;
    for (const auto& [node, t] : next)
      if (auto had = table.find(node); had != table.end() && had->second == t) ++kept;
    sizes = ClusterSizes::of(jobs);
    table = std::move(next);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f.bytes));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * f.jobs));
  state.counters["nodes"] = static_cast<double>(table.size());
  state.counters["nodes_kept"] = static_cast<double>(kept);  // tables of the last read taken from the one before
  // The heap the last table holds (what the processor keeps between refreshes): what freeing it gives back. And the
  // heap one read's jobs hold while the new table is made (a refresh's peak beside the table in use).
  size_t with_table = mallinfo2().uordblks;
  table = {};
  state.counters["table_heap_MiB"] = static_cast<double>(with_table - mallinfo2().uordblks) / (1 << 20);
  size_t before_read = mallinfo2().uordblks;
  ClusterJobs read = attribute_cluster(f.script[0], std::chrono::seconds(60), sizes);
  state.counters["read_heap_MiB"] = static_cast<double>(mallinfo2().uordblks - before_read) / (1 << 20);
}

void BM_ClusterTableRefresh(benchmark::State& state) { refresh_tables(state, Refresh::FromPrevious); }
BENCHMARK(BM_ClusterTableRefresh)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

void BM_ClusterTableFromScratchBaseline(benchmark::State& state) { refresh_tables(state, Refresh::FromScratch); }
BENCHMARK(BM_ClusterTableFromScratchBaseline)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

void BM_ClusterTableReadOnlyBaseline(benchmark::State& state) {
  const FakeScontrol& f = fake_scontrol();
  CommandSpec spec;
  spec.argv = {f.script[0], "show", "job", "-d"};
  spec.timeout = std::chrono::seconds(60);
  size_t lines = 0;
  for (auto _ : state) lines += stream_command_lines(spec, [](std::string_view line) { benchmark::DoNotOptimize(line.data()); });
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * f.bytes));
  state.counters["lines"] = static_cast<double>(lines) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ClusterTableReadOnlyBaseline)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
