// A 100 000-GPU cluster's telemetry against one `gcm slurm_processor` on loopback.
//
// HOSTS nodes of 8 GPUs (12 500 by default) each send two OTLP/HTTP requests every INTERVAL seconds (10 s): a
// dcgm-exporter-like one (40 DCGM fields per GPU, dcgm-exporter's labels) and an agent-like one (the numeric fields
// of gcm's own per-GPU record, IndexedDeviceMetrics), each at a random phase of the interval with +-0.5 s of jitter
// per round, so 8 x (40 + agent fields) series per node. The job table is a realistic one of ~20 000 jobs (whole-node
// jobs of 2-512 nodes on 60 % of the nodes, 1-4-GPU jobs sharing the others), served by a fake `scontrol show job
// -d` that the processor reads once per refresh (its slurmctld source for other hosts). The downstream is a
// loopback OTLP/HTTP server of this process.
//
// Two phases: the downstream keeps up (SECONDS), then it stalls (every answer 3 s late, SECONDS / 2). For each:
// points/s accepted, the processor's CPU seconds per million points (from /proc, whole process), its RSS (every
// 0.5 s) and the requests refused (503 with Retry-After, counted), failed or sent late (the generator's own limit).
// Before them, requests one at a time straight to the downstream and through the processor give the latency the
// processor adds.
// Usage: [DOWNSTREAM_LATENCY_MS=N] cluster_load GCM SECONDS [HOSTS] [INTERVAL_S] [SENDERS]
#include <httplib.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/http_client.h"
#include "cluster_job_table.h"
#include "load_stats.h"
#include "core/schema.h"
#include "gpu/gpu_records.h"
#include "metrics_service.pb.h"
#include "slurm/hostlist.h"

namespace {

using gcm::bench::cpu_seconds;
using gcm::bench::pct;
using gcm::bench::rss_kib;
namespace pbc = opentelemetry::proto::common::v1;
namespace pbm = opentelemetry::proto::metrics::v1;
using Clock = std::chrono::steady_clock;
using Request = opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest;

using gcm::bench::host_name;
using gcm::bench::kGpusPerHost;
using gcm::bench::write_job_table;

void put(google::protobuf::RepeatedPtrField<pbc::KeyValue>* a, const std::string& k, const std::string& v) {
  auto* kv = a->Add();
  kv->set_key(k);
  kv->mutable_value()->set_string_value(v);
}

// One exporter's request of one host, made of a template: the points are the same for every host (the processor
// reads their attributes, not their values), the resource names the host. `request(host)` only concatenates bytes,
// so the generator spends its CPU on sending.
class Payload {
 public:
  Payload(std::vector<std::string> metrics, bool dcgm) {
    pbm::ResourceMetrics rm;
    auto* sm = rm.add_scope_metrics();
    sm->mutable_scope()->set_name(dcgm ? "otelcol/prometheusreceiver" : "gcm-agent");
    for (const auto& name : metrics) {
      auto* m = sm->add_metrics();
      m->set_name(name);
      for (int g = 0; g < kGpusPerHost; ++g, ++points_) {
        auto* p = m->mutable_gauge()->add_data_points();
        p->set_time_unix_nano(1700000000000000000ull);
        p->set_as_double(42.5 + g);
        auto* a = p->mutable_attributes();
        put(a, "gpu", std::to_string(g));
        put(a, dcgm ? "UUID" : "uuid", fmt::format("GPU-{:08x}-aaaa-bbbb-cccc-dddddddddddd", g));
        if (dcgm) {
          put(a, "device", "nvidia" + std::to_string(g));
          put(a, "modelName", "NVIDIA H100 80GB HBM3");
          put(a, "pci_bus_id", fmt::format("00000000:{:02X}:00.0", 0x18 + g * 0x10));
          put(a, "DCGM_FI_DRIVER_VERSION", "550.54.15");
        }
      }
    }
    rm.SerializeToString(&scope_bytes_);
    service_ = dcgm ? "dcgm-exporter" : "gcm-agent";
  }
  int points() const { return points_; }
  std::string request(int host) const {
    pbm::ResourceMetrics rm;
    auto* attrs = rm.mutable_resource()->mutable_attributes();
    put(attrs, "host.name", host_name(host));
    put(attrs, "service.name", service_);
    std::string out;
    rm.SerializeToString(&out);  // field 1 of ResourceMetrics; the template's field 2 is appended as bytes
    out += scope_bytes_;         // (two serialized messages side by side are their merge)
    std::string head = "\x0a";   // ExportMetricsServiceRequest field 1, length-delimited
    uint64_t n = out.size();
    for (; n >= 0x80; n >>= 7) head += static_cast<char>((n & 0x7f) | 0x80);
    head += static_cast<char>(n);
    return head + out;
  }

 private:
  std::string scope_bytes_;
  std::string service_;
  int points_ = 0;
};

std::vector<std::string> dcgm_fields() {
  std::vector<std::string> names = {"DCGM_FI_DEV_SM_CLOCK",
                                    "DCGM_FI_DEV_MEM_CLOCK",
                                    "DCGM_FI_DEV_MEMORY_TEMP",
                                    "DCGM_FI_DEV_GPU_TEMP",
                                    "DCGM_FI_DEV_POWER_USAGE",
                                    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                                    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
                                    "DCGM_FI_DEV_GPU_UTIL",
                                    "DCGM_FI_DEV_MEM_COPY_UTIL",
                                    "DCGM_FI_DEV_ENC_UTIL",
                                    "DCGM_FI_DEV_DEC_UTIL",
                                    "DCGM_FI_DEV_XID_ERRORS",
                                    "DCGM_FI_DEV_FB_FREE",
                                    "DCGM_FI_DEV_FB_USED",
                                    "DCGM_FI_DEV_FB_RESERVED",
                                    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
                                    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
                                    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
                                    "DCGM_FI_DEV_ROW_REMAP_FAILURE",
                                    "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
                                    "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                                    "DCGM_FI_PROF_SM_ACTIVE",
                                    "DCGM_FI_PROF_SM_OCCUPANCY",
                                    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                                    "DCGM_FI_PROF_DRAM_ACTIVE",
                                    "DCGM_FI_PROF_PIPE_FP64_ACTIVE",
                                    "DCGM_FI_PROF_PIPE_FP32_ACTIVE",
                                    "DCGM_FI_PROF_PIPE_FP16_ACTIVE",
                                    "DCGM_FI_PROF_PCIE_TX_BYTES",
                                    "DCGM_FI_PROF_PCIE_RX_BYTES",
                                    "DCGM_FI_PROF_NVLINK_TX_BYTES",
                                    "DCGM_FI_PROF_NVLINK_RX_BYTES",
                                    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
                                    "DCGM_FI_DEV_POWER_VIOLATION",
                                    "DCGM_FI_DEV_THERMAL_VIOLATION",
                                    "DCGM_FI_DEV_SYNC_BOOST_VIOLATION",
                                    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
                                    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                                    "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
                                    "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"};
  return names;
}

// gcm's own per-GPU series: the numeric fields of the IndexedDeviceMetrics record, named as on /metrics.
std::vector<std::string> agent_fields() {
  std::vector<std::string> names;
  const gcm::Schema& s = gcm::kIndexedDeviceMetrics.get();
  for (const auto& f : s.fields)
    if (f.role == gcm::FieldRole::Gauge || f.role == gcm::FieldRole::Counter)
      names.push_back("gcm_" + s.metric_prefix + "_" + (f.metric_name.empty() ? f.name : f.metric_name));
  return names;
}

// `scontrol show job -d` of a cluster: whole-node jobs of 2-512 nodes over 60 % of the nodes, jobs of 1, 2 or 4
// GPUs packed on the rest. Returns the job count.
struct Send {
  int host;
  int kind;  // 0 dcgm, 1 agent
  Clock::time_point due;
};

struct PhaseCounts {
  std::atomic<uint64_t> accepted{0}, points{0}, refused{0}, refused_without_retry_after{0}, failed{0}, late{0};
  std::mutex mu;
  std::vector<double> latency_us;
};

// The processor (under /usr/bin/time) stopped on every way out of the run: a run that ended early on an error used
// to leave it running, and a script reading the bench's output waited for ever on the pipe the processor kept.
struct ProcessorChild {
  pid_t time_pid = -1, proc_pid = -1;
  int status = 0;  // /usr/bin/time's, once stopped
  void stop() {
    if (proc_pid > 0)
      ::kill(proc_pid, SIGTERM);
    else if (time_pid > 0)
      ::kill(time_pid, SIGTERM);  // the processor never said where it listens
    proc_pid = -1;
    if (time_pid > 0) ::waitpid(time_pid, &status, 0);
    time_pid = -1;
  }
  ~ProcessorChild() { stop(); }
};

int run(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  // Caught here so that the stack unwinds and the processor is stopped (an uncaught exception need not unwind).
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "cluster_load: " << e.what() << "\n";
    return 1;
  }
}

namespace {

int run(int argc, char** argv) {
  if (argc < 3 || argc > 6) {
    std::cerr << "usage: cluster_load GCM SECONDS [HOSTS] [INTERVAL_S] [SENDERS]\n";
    return 2;
  }
  gcm::bench::raise_open_files_limit();
  std::string gcm = argv[1];
  double seconds = std::stod(argv[2]);
  int hosts = argc > 3 ? std::stoi(argv[3]) : 12500;
  double interval = argc > 4 ? std::stod(argv[4]) : 10;
  int senders = argc > 5 ? std::stoi(argv[5]) : 32;

  std::string dir = std::filesystem::temp_directory_path() / fmt::format("gcm-cluster-load-{}", ::getpid());
  std::filesystem::create_directories(dir);
  int jobs = write_job_table(dir + "/jobs-d.txt", hosts);
  std::ofstream(dir + "/scontrol") << "#!/bin/sh\necho \"$*\" >> " << dir << "/scontrol-calls\nexec cat " << dir
                                   << "/jobs-d.txt\n";
  std::filesystem::permissions(dir + "/scontrol", std::filesystem::perms::owner_all);

  std::atomic<uint64_t> down_bytes{0}, down_requests{0};
  std::atomic<int> down_delay_ms{0};
  httplib::Server downstream;
  downstream.new_task_queue = [] { return new httplib::ThreadPool(64); };
  // An OpenTelemetry Collector keeps a connection for as long as the client does; cpp-httplib closes one after 5
  // requests by default, which made the processor connect again every few batches.
  downstream.set_keep_alive_max_count(1u << 30);
  downstream.Post(R"(/v1/.*)", [&](const httplib::Request& req, httplib::Response& res) {
    if (int d = down_delay_ms.load()) std::this_thread::sleep_for(std::chrono::milliseconds(d));
    down_bytes += req.body.size();
    ++down_requests;
    res.status = 200;
  });
  int down_port = downstream.bind_to_any_port("127.0.0.1");
  std::thread down_thread([&] { downstream.listen_after_bind(); });
  struct StopDownstream {  // an early return or an exception must not leave a joinable thread (std::terminate)
    httplib::Server& server;
    std::thread& thread;
    ~StopDownstream() {
      server.stop();
      if (thread.joinable()) thread.join();
    }
  } stop_downstream{downstream, down_thread};
  while (!downstream.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));

  int out[2];
  if (pipe(out) != 0) return 1;
  ProcessorChild child;
  pid_t time_pid = fork();
  child.time_pid = time_pid;
  if (time_pid == 0) {
    dup2(out[1], 1);
    std::vector<std::string> args = {"time",
                                     "-v",
                                     "-o",
                                     dir + "/time.txt",
                                     gcm,
                                     "slurm_processor",
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--downstream",
                                     fmt::format("http://127.0.0.1:{}", down_port),
                                     "--attribution",
                                     "slurmctld",
                                     "--scontrol",
                                     dir + "/scontrol",
                                     "--log-folder",
                                     dir,
                                     "--max-connections",
                                     "4096"};
    std::vector<char*> argv_c;
    for (auto& a : args) argv_c.push_back(a.data());
    argv_c.push_back(nullptr);
    execv("/usr/bin/time", argv_c.data());
    _exit(127);
  }
  close(out[1]);
  std::string line;
  for (char c; read(out[0], &c, 1) == 1 && c != '\n';) line += c;
  if (line.find("listening on") == std::string::npos) {
    std::cerr << "slurm_processor did not start: " << line << "\n";
    return 1;
  }
  std::string url = fmt::format("http://127.0.0.1:{}/v1/metrics", std::stoi(line.substr(line.rfind(':') + 1)));
  std::string direct = fmt::format("http://127.0.0.1:{}/v1/metrics", down_port);
  pid_t proc_pid = -1;
  std::ifstream(fmt::format("/proc/{}/task/{}/children", time_pid, time_pid)) >> proc_pid;
  child.proc_pid = proc_pid;

  const Payload kinds[2] = {Payload(dcgm_fields(), true), Payload(agent_fields(), false)};
  // Each body is made when it is sent (12 500 x 2 bodies of 100-200 KB would be gigabytes): bytes concatenated.
  auto body_of = [&](int host, int kind) { return kinds[kind].request(host); };

  // Latency added: one request at a time, straight to the downstream and through the processor.
  // 1 000 each, so that the p99 is the tenth slowest rather than the slowest one; the processor's first request,
  // which waits for the first read of the job table, is timed on its own before them.
  // The processor answers a request once it is queued, so one client sending back to back can outrun the forwarding
  // and fill the queue: a 503 then says to come back after Retry-After, which the probe does (the refused attempt is
  // counted, not timed).
  int probe_refused = 0;
  auto one_at_a_time = [&](const std::string& to, int count) {
    gcm::HttpClient http;
    std::vector<double> us;
    for (int i = 0; i < count; ++i) {
      std::string body = body_of(i % hosts, 0);
      auto t0 = Clock::now();
      auto res = http.post(to, body, {"Content-Type: application/x-protobuf"}, std::chrono::seconds(10));
      if (res.status == 503 && probe_refused < 100) {
        ++probe_refused;
        int wait_s = std::clamp(std::atoi(res.header("retry-after").c_str()), 1, 5);
        std::this_thread::sleep_for(std::chrono::seconds(wait_s));
        --i;
        continue;
      }
      if (res.status != 200) throw std::runtime_error(fmt::format("{} answered {}: {}", to, res.status, res.body));
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
    return us;
  };
  long rss_start = rss_kib(proc_pid);
  auto base = one_at_a_time(direct, 1000);
  const double first_us = one_at_a_time(url, 1).front();
  auto via = one_at_a_time(url, 1000);
  long rss_idle = rss_kib(proc_pid);

  // The schedule: each (host, kind) at its own phase of the interval, +-0.5 s of jitter per round.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> phase(0, interval), jitter(-0.5, 0.5);
  std::vector<std::pair<double, std::pair<int, int>>> slots;
  for (int h = 0; h < hosts; ++h)
    for (int k = 0; k < 2; ++k) slots.push_back({phase(rng), {h, k}});
  std::sort(slots.begin(), slots.end());

  std::mutex qmu;
  std::condition_variable qcv;
  std::deque<Send> queue;
  std::atomic<bool> done{false};
  PhaseCounts* counts = nullptr;
  std::mutex counts_mu;
  std::vector<std::thread> pool;
  for (int i = 0; i < senders; ++i)
    pool.emplace_back([&] {
      gcm::HttpClient http;
      for (;;) {
        Send s;
        {
          std::unique_lock lock(qmu);
          qcv.wait(lock, [&] { return done || !queue.empty(); });
          if (queue.empty()) return;
          s = queue.front();
          queue.pop_front();
        }
        PhaseCounts* c;
        {
          std::lock_guard lock(counts_mu);
          c = counts;
        }
        if (Clock::now() - s.due > std::chrono::seconds(1)) ++c->late;
        std::string body = body_of(s.host, s.kind);
        auto t0 = Clock::now();
        try {
          auto res = http.post(url, body, {"Content-Type: application/x-protobuf"}, std::chrono::seconds(10));
          if (res.status == 200 && res.body.empty()) {
            ++c->accepted;
            c->points += static_cast<uint64_t>(kinds[s.kind].points());
          } else if (res.status == 503) {
            ++c->refused;
            if (res.header("retry-after").empty()) ++c->refused_without_retry_after;
          } else {
            ++c->failed;
          }
        } catch (const std::exception&) {
          ++c->failed;
        }
        double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        std::lock_guard lock(c->mu);
        c->latency_us.push_back(us);
      }
    });

  auto run_phase = [&](const char* name, double length, int delay_ms) {
    PhaseCounts phase_counts;
    {
      std::lock_guard lock(counts_mu);
      counts = &phase_counts;
    }
    down_delay_ms = delay_ms;
    double cpu0 = cpu_seconds(proc_pid);
    auto threads0 = gcm::bench::cpu_seconds_by_thread(proc_pid);
    uint64_t down0 = down_requests;
    std::vector<long> rss;
    auto start = Clock::now();
    auto next_rss = start;
    for (int round = 0; Clock::now() - start < std::chrono::duration<double>(length); ++round)
      for (const auto& [at, hk] : slots) {
        auto due = start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(round * interval + at + jitter(rng)));
        if (due - start > std::chrono::duration<double>(length)) break;
        std::this_thread::sleep_until(due);
        if (Clock::now() >= next_rss) {
          rss.push_back(rss_kib(proc_pid));
          next_rss += std::chrono::milliseconds(500);
        }
        {
          std::lock_guard lock(qmu);
          queue.push_back({hk.first, hk.second, due});
        }
        qcv.notify_one();
      }
    for (;;) {  // let the sends of this phase end (asked without holding the queue while waiting)
      {
        std::lock_guard lock(qmu);
        if (queue.empty()) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    double cpu = cpu_seconds(proc_pid) - cpu0;
    auto threads = gcm::bench::cpu_seconds_by_thread(proc_pid);
    std::lock_guard lock(counts_mu);
    long rss_max = rss.empty() ? 0 : *std::max_element(rss.begin(), rss.end());
    std::vector<double> lat;
    {
      std::lock_guard l(phase_counts.mu);
      lat = phase_counts.latency_us;
    }
    fmt::print(
        "{}: {:.0f} s, {} requests accepted ({:.0f}/s), {:.0f} points/s accepted; refused {} ({} without "
        "Retry-After), failed {}, sent > 1 s late {}\n",
        name, elapsed, phase_counts.accepted.load(), phase_counts.accepted / elapsed, phase_counts.points / elapsed,
        phase_counts.refused.load(), phase_counts.refused_without_retry_after.load(), phase_counts.failed.load(),
        phase_counts.late.load());
    fmt::print(
        "  processor CPU {:.1f} s = {:.3f} CPU-s per million points ({:.2f} M points per CPU second); "
        "RSS max {} MiB (every 0.5 s); request latency p50 {:.1f} ms p99 {:.1f} ms; downstream got {} "
        "requests\n",
        cpu, cpu / std::max(1e-9, phase_counts.points / 1e6), phase_counts.points / 1e6 / std::max(1e-9, cpu),
        rss_max / 1024, pct(lat, 0.5) / 1000, pct(lat, 0.99) / 1000, down_requests - down0);
    // Per thread role, user + system CPU-s per million points (the main thread keeps the process's name).
    std::string by_thread;
    double mpoints = std::max(1e-9, phase_counts.points / 1e6);
    for (const auto& [name_of, t] : threads) {
      auto before = threads0.find(name_of);
      double user = t.user_s - (before == threads0.end() ? 0 : before->second.user_s);
      double sys = t.system_s - (before == threads0.end() ? 0 : before->second.system_s);
      by_thread += fmt::format(" {} {:.3f} + {:.3f};", name_of, user / mpoints, sys / mpoints);
    }
    fmt::print("  by thread, user + system CPU-s per million points:{}\n", by_thread);
    counts = nullptr;
  };

  fmt::print(
      "cluster: {} hosts x {} GPUs, {} jobs in the table, interval {} s, {} senders; requests of {} points "
      "(dcgm-like) and {} points (agent-like): {:.0f} points/s offered\n",
      hosts, kGpusPerHost, jobs, interval, senders, kinds[0].points(), kinds[1].points(),
      hosts * (kinds[0].points() + kinds[1].points()) / interval);
  fmt::print(
      "added latency, one request at a time: direct p50 {:.2f} ms p99 {:.2f} ms, via slurm_processor p50 "
      "{:.2f} ms p99 {:.2f} ms (+{:.2f} ms p50, +{:.2f} ms p99; 1 000 each), after a first one that waited {:.0f} ms "
      "for the job table ({} refused with 503 and sent again after Retry-After); processor RSS at start {} MiB, after "
      "them {} MiB\n",
      pct(base, 0.5) / 1000, pct(base, 0.99) / 1000, pct(via, 0.5) / 1000, pct(via, 0.99) / 1000,
      (pct(via, 0.5) - pct(base, 0.5)) / 1000, (pct(via, 0.99) - pct(base, 0.99)) / 1000, first_us / 1000,
      probe_refused, rss_start / 1024, rss_idle / 1024);
  // DOWNSTREAM_LATENCY_MS: the downstream answers that much later while it keeps up (a collector across a network,
  // or busy): it takes any number of requests at once, so only a forwarder that sends one at a time falls behind.
  const char* latency = std::getenv("DOWNSTREAM_LATENCY_MS");
  int latency_ms = latency ? std::stoi(latency) : 0;
  run_phase(
      latency_ms ? "downstream keeps up, answering each request after DOWNSTREAM_LATENCY_MS" : "downstream keeps up",
      seconds, latency_ms);
  run_phase("downstream stalls (3 s per answer)", seconds / 2, 3000);
  down_delay_ms = 0;
  {
    std::lock_guard lock(qmu);
    done = true;
  }
  qcv.notify_all();
  for (auto& t : pool) t.join();

  std::string metrics;
  try {
    metrics = gcm::HttpClient().get(url.substr(0, url.rfind("/v1/")) + "/metrics", std::chrono::seconds(5)).body;
  } catch (const std::exception&) {
  }
  child.stop();
  downstream.stop();
  down_thread.join();
  int st = child.status;
  std::ifstream calls(dir + "/scontrol-calls");
  int scontrol_calls = static_cast<int>(std::count(std::istreambuf_iterator<char>(calls), {}, '\n'));
  auto report = gcm::bench::read_time_report(dir + "/time.txt");
  fmt::print("scontrol show job -d calls: {}; processor max RSS over the run {} MiB; downstream received {} MiB\n",
             scontrol_calls, report.max_rss_kib / 1024, down_bytes.load() >> 20);
  // Where the processor's CPU went over the whole run (start-up and the latency probes included): its own code or
  // the kernel's, and how often its threads waited (voluntary) or were preempted.
  fmt::print("processor over the run: user {:.1f} s, system {:.1f} s; context switches {} voluntary, {} involuntary\n",
             report.user_s, report.system_s, report.voluntary_switches, report.involuntary_switches);
  for (const char* m : {"gcm_slurm_processor_refused_requests_total", "gcm_slurm_processor_attribution_cluster_jobs",
                        "gcm_slurm_processor_attribution_cluster_nodes", "gcm_slurm_processor_dropped_total"}) {
    auto at = metrics.find(std::string("\n") + m + " ");
    if (at != std::string::npos) fmt::print("  {}\n", metrics.substr(at + 1, metrics.find('\n', at + 1) - at - 1));
  }
  std::filesystem::remove_all(dir);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

}  // namespace
