// Writes what the agents of a simulated cluster would have exported, as OpenMetrics files for `promtool tsdb
// create-blocks-from openmetrics`: gcm_gpu_clock_sm_hertz, gcm_gpu_utilization_percent and gcm_gpu_job_info for
// N nodes of 8 GPUs at a 30 s scrape interval. bench/scripts/peer_node_rules.sh loads it into a real Prometheus and
// evaluates the shipped cross-node rules (deploy/prometheus/rules/gcm-peer-node.yml) over it, to count the states a
// clean cluster enters (false drains) and how long a slow node takes to be caught.
//
// Each node's GPUs are the detector harness's NodeSimulator (the same noise model as the node-local detector's
// report: clock jitter, silicon offsets, a per-node wobble, thermal drift, pipeline stages, power-brake blips), one
// scrape per window. On top, a cluster schedule places multi-node jobs: 1..16 nodes, 1..12 h, 5..30 min idle gaps,
// so jobs start and end mid-run and some are too small to compare. Each node's drift has its own phase: racks heat
// up at different times, the hardest clean case for a cross-node comparison.
//
//   peer_node_stream --nodes 16 --days 7 --seed 1 --out DIR            (writes DIR/0000.om, DIR/0001.om, ...)
//   peer_node_stream --nodes 8 --days 0.125 --one-job --slow-node 3 --slow-fraction 0.15 --slow-start-s 3600 --out D
// prints "start=<unix s> end=<unix s> fault_start=<unix s or 0>" on stdout.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "detector/harness.h"

using namespace gcm::detector::harness;

namespace {

// 30 s aligned, so that a subquery's [..:30s] steps land on the samples.
constexpr int64_t kStartUnix = 1'699'999'980;
constexpr double kWindowS = 30;
constexpr double kIdleClockMhz = 345;

struct Options {
  int nodes = 16;
  double days = 7;
  uint64_t seed = 1;
  bool one_job = false;
  int slow_node = 0;  // 1-based; 0: none
  double slow_fraction = 0;
  double slow_start_s = 0;
  std::string out;
};

[[noreturn]] void usage(const std::string& why) {
  fmt::print(stderr,
             "peer_node_stream: {}\nusage: peer_node_stream --out DIR [--nodes N] [--days D] [--seed S] [--one-job]\n"
             "       [--slow-node K --slow-fraction F --slow-start-s T]\n",
             why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--nodes")
        o.nodes = std::stoi(value());
      else if (a == "--days")
        o.days = std::stod(value());
      else if (a == "--seed")
        o.seed = std::stoull(value());
      else if (a == "--one-job")
        o.one_job = true;
      else if (a == "--slow-node")
        o.slow_node = std::stoi(value());
      else if (a == "--slow-fraction")
        o.slow_fraction = std::stod(value());
      else if (a == "--slow-start-s")
        o.slow_start_s = std::stod(value());
      else if (a == "--out")
        o.out = value();
      else
        usage("unknown option " + a);
    } catch (const std::logic_error&) {
      usage(a + " needs a number, got '" + argv[i] + "'");
    }
  }
  if (o.out.empty()) usage("--out is required");
  if (o.nodes < 1 || o.days <= 0) usage("--nodes and --days must be positive");
  if (o.slow_node < 0 || o.slow_node > o.nodes) usage("--slow-node must name one of the nodes (1..N)");
  return o;
}

struct Job {
  double start = 0, end = 0;
  std::string id;
};

// Per node, its jobs in time order. Each job takes the nodes that are free soonest (a plain first-fit scheduler),
// so the cluster stays busy and jobs of different sizes interleave.
std::vector<std::vector<Job>> schedule(const Options& o, double duration_s) {
  std::vector<std::vector<Job>> jobs(static_cast<size_t>(o.nodes));
  if (o.one_job) {
    for (auto& j : jobs) j.push_back({0, duration_s + kWindowS, "1"});
    return jobs;
  }
  uint64_t s = o.seed * 0x9e3779b97f4a7c15ull + 11;
  auto uniform = [&s] {  // splitmix64, as the node simulator's: the schedule is the same with any standard library
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  };
  const int sizes[] = {1, 2, 3, 4, 4, 8, 8, 16};
  std::vector<double> free_at(static_cast<size_t>(o.nodes), 0);
  int next_id = 5000;
  while (*std::min_element(free_at.begin(), free_at.end()) < duration_s) {
    size_t k = std::min<size_t>(static_cast<size_t>(sizes[static_cast<int>(uniform() * 8)]), free_at.size());
    std::vector<size_t> order(free_at.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return free_at[a] < free_at[b]; });
    double start = 0;
    for (size_t i = 0; i < k; ++i) start = std::max(start, free_at[order[i]]);
    start += 300 + 1500 * uniform();
    Job j{start, start + 3600 * (1 + 11 * uniform()), std::to_string(next_id++)};
    for (size_t i = 0; i < k; ++i) {
      jobs[order[i]].push_back(j);
      free_at[order[i]] = j.end;
    }
  }
  return jobs;
}

const Job* job_at(const std::vector<Job>& jobs, double t) {
  for (const auto& j : jobs) {
    if (t > j.start && t <= j.end) return &j;
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const double duration_s = o.days * 86400;
  const auto steps = static_cast<size_t>(duration_s / kWindowS);
  const auto jobs = schedule(o, duration_s);
  const int gpus = 8;

  // Series-major output (promtool wants each family's samples together), so the values are kept per GPU first:
  // 128 GPUs x 20 160 steps of a week fit in a few tens of MB.
  struct GpuSeries {
    std::vector<float> clock_mhz, util;
    std::vector<const Job*> job;
  };
  std::vector<GpuSeries> series(static_cast<size_t>(o.nodes * gpus));
  for (int n = 0; n < o.nodes; ++n) {
    NodeSpec spec;
    spec.seed = o.seed * 1000 + static_cast<uint64_t>(n) + 1;
    spec.gpus = gpus;
    spec.window_s = kWindowS;
    spec.samples_per_window = 1;  // a scrape sees one reading, not a window's mean
    spec.noise.jobs = false;      // busy all the time; the cluster schedule decides what runs
    spec.noise.drift_phase_s = 86400.0 * n / o.nodes;
    if (o.slow_node == n + 1) spec.fault = {Fault::NodeSlow, 0, o.slow_start_s, o.slow_fraction};
    NodeSimulator sim(spec);
    for (size_t i = 0; i < steps; ++i) {
      const auto& round = sim.next();
      const Job* job = job_at(jobs[static_cast<size_t>(n)], sim.now_s());
      for (int g = 0; g < gpus; ++g) {
        GpuSeries& gs = series[static_cast<size_t>(n * gpus + g)];
        const auto& w = round[static_cast<size_t>(g)];
        gs.clock_mhz.push_back(static_cast<float>(job ? w.sm_clock_mhz->mean : kIdleClockMhz));
        gs.util.push_back(static_cast<float>(job ? w.gpu_util_percent->mean : 0));
        gs.job.push_back(job);
      }
    }
  }

  // One file per 2 h of samples, on Prometheus's block boundaries: promtool's importer reads its whole input once
  // for every 2 h block it writes, so one file of a week would be read 84 times.
  constexpr int64_t kBlockS = 7200;
  auto at = [](size_t step) { return kStartUnix + static_cast<int64_t>((step + 1) * kWindowS); };
  auto labels = [](size_t i) { return fmt::format("cluster=\"sim\",node=\"node{}\",gpu=\"{}\"", i / 8 + 1, i % 8); };
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) {
    fmt::print(stderr, "peer_node_stream: cannot create {}: {}\n", o.out, ec.message());
    return 1;
  }
  int files = 0;
  for (size_t first = 0; first < steps; ++files) {
    const int64_t block_end = (at(first) / kBlockS + 1) * kBlockS;
    size_t last = first;  // one past the chunk's last step
    while (last < steps && at(last) < block_end) ++last;
    const std::string path = fmt::format("{}/{:04d}.om", o.out, files);
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
    if (!f) {
      fmt::print(stderr, "peer_node_stream: cannot write {}: {}\n", path, std::strerror(errno));
      return 1;
    }
    fmt::print(f.get(), "# TYPE gcm_gpu_clock_sm_hertz gauge\n");
    for (size_t i = 0; i < series.size(); ++i)
      for (size_t s = first; s < last; ++s)
        fmt::print(f.get(), "gcm_gpu_clock_sm_hertz{{{}}} {:.0f} {}\n", labels(i), series[i].clock_mhz[s] * 1e6, at(s));
    fmt::print(f.get(), "# TYPE gcm_gpu_utilization_percent gauge\n");
    for (size_t i = 0; i < series.size(); ++i)
      for (size_t s = first; s < last; ++s)
        fmt::print(f.get(), "gcm_gpu_utilization_percent{{{}}} {:.1f} {}\n", labels(i), series[i].util[s], at(s));
    // One series per GPU and job, present while the job runs (the agent's info series).
    fmt::print(f.get(), "# TYPE gcm_gpu_job_info gauge\n");
    for (size_t i = 0; i < series.size(); ++i) {
      std::map<std::string, std::vector<size_t>> by_job;
      for (size_t s = first; s < last; ++s)
        if (series[i].job[s]) by_job[series[i].job[s]->id].push_back(s);
      for (const auto& [id, steps_of_job] : by_job)
        for (size_t s : steps_of_job)
          fmt::print(f.get(), "gcm_gpu_job_info{{{},job_id=\"{}\"}} 1 {}\n", labels(i), id, at(s));
    }
    fmt::print(f.get(), "# EOF\n");
    if (std::ferror(f.get())) {
      fmt::print(stderr, "peer_node_stream: writing {} failed\n", path);
      return 1;
    }
    first = last;
  }
  fmt::print("start={} end={} fault_start={}\n", kStartUnix, kStartUnix + static_cast<int64_t>(steps * kWindowS),
             o.slow_node ? kStartUnix + static_cast<int64_t>(o.slow_start_s) : 0);
  return 0;
}
