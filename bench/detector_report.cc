// The zombie-GPU detector's report (make bench): per fault scenario the detection time in windows and seconds at
// default settings, false states per simulated node-day on clean noisy data, the smallest slowdown caught, and the
// peer-deviation threshold against both; then the detector's cost per window round as a Google Benchmark.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>

#include "detector/detector.h"
#include "detector/scenario.h"

using namespace gcm::detector;
using namespace gcm::detector::harness;

namespace {

constexpr int kSeeds = 20;

void print_faults(const DetectorConfig& c) {
  fmt::print("{:<28} {:>8} {:>9} {:>9} {:>13}\n", "scenario (GPU 3 of 8)", "windows", "seconds", "state",
             "false states");
  for (const Scenario& s : fault_scenarios(1)) {
    ScenarioResult r = run_scenario(s, c);
    std::string win = r.detect_windows < 0 ? "-" : std::to_string(r.detect_windows);
    std::string sec = r.detect_seconds < 0 ? "-" : fmt::format("{:.0f}", r.detect_seconds);
    const char* state = r.detect_state == 3 ? "failed" : r.detect_state == 2 ? "degraded" : "not seen";
    fmt::print("{:<28} {:>8} {:>9} {:>9} {:>13}\n", s.name, win, sec, state,
               r.false_suspect + r.false_degraded + r.false_failed);
  }
}

// The smallest slowdown every seed catches within 4 windows (< 2 min).
void print_smallest(const DetectorConfig& c) {
  double smallest = -1;
  fmt::print("\n{:<12} {:>22} {:>12}\n", "SM clock", "caught <= 4 windows", "max windows");
  for (int tenth = 50; tenth >= 20; tenth -= 5) {
    double m = tenth / 1000.0;
    int caught = 0, worst = 0;
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      ScenarioResult r = run_scenario(slowdown_scenario(m, seed), c);
      if (r.detect_windows >= 1 && r.detect_windows <= 4) ++caught;
      worst = r.detect_windows < 0 ? 999 : std::max(worst, r.detect_windows);
    }
    fmt::print("-{:<11} {:>19}/{} {:>12}\n", fmt::format("{:.1f}%", 100 * m), caught, kSeeds,
               worst == 999 ? "never" : std::to_string(worst));
    if (caught == kSeeds) smallest = m;
  }
  fmt::print("smallest slowdown caught by every seed within 4 windows: {:.1f}%\n", 100 * smallest);
}

void print_clean(const DetectorConfig& c) {
  auto t0 = std::chrono::steady_clock::now();
  int s = 0, d = 0, f = 0;
  double days = 0;
  // 1000 node-days: the goal is under 0.005 false suspects per node-day (issue 49), and with none seen the 95 %
  // upper bound of the rate is 3 / node-days (the rule of three), so 100 node-days could not show it.
  for (uint64_t seed = 11; seed < 51; ++seed) {
    ScenarioResult r = run_scenario(clean_scenario(25, seed), c);
    s += r.false_suspect;
    d += r.false_degraded;
    f += r.false_failed;
    days += r.node_days;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print(
      "\nclean, noisy, with throttle blips (1 per GPU-hour): {:.0f} node-days (8 GPUs, 30 s windows) in {:.1f} s: "
      "false suspect {:.4f}/node-day (95 % upper bound {:.4f}), degraded {:.4f}, failed {:.4f}\n",
      days, secs, s / days, s == 0 ? 3 / days : -1.0, d / days, f / days);
}

// Throttle blips of single GPUs (HW power brake or HW slowdown for 2-15 s, with the reason bit): false states per
// node-day at several rates (the clean runs above have 1 per GPU-hour).
void print_blips(const DetectorConfig& c) {
  fmt::print("\n{:<26} {:>22} {:>22}\n", "GPU blips per GPU-hour", "false suspect/node-day", "degraded/node-day");
  for (double rate : {0.0, 1.0, 4.0}) {
    int s = 0, d = 0;
    double days = 0;
    for (uint64_t seed : {31, 32}) {
      Scenario sc = clean_scenario(10, seed);
      sc.node.noise.gpu_blips_per_hour = rate;
      ScenarioResult r = run_scenario(sc, c);
      s += r.false_suspect;
      d += r.false_degraded;
      days += r.node_days;
    }
    fmt::print("{:<26} {:>22.4f} {:>22.4f}\n", fmt::format("{:g}", rate), s / days, d / days);
  }
}

// Why slow_deviation is 3 % (with slow_zscore 3 at the 1 % MAD floor, the same bar): false suspects on clean data
// against what a 5 % step needs. Both thresholds move together here, else the z-score alone would hold the bar.
void print_threshold_sweep() {
  fmt::print("\n{:<22} {:>24} {:>26}\n", "slow_deviation (and z)", "false suspect/node-day", "-5% caught <= 4 windows");
  for (double t : {0.015, 0.02, 0.025, 0.03, 0.035, 0.04}) {
    DetectorConfig c;
    c.slow_deviation = t;
    c.slow_zscore = t / c.mad_floor;
    int suspects = 0;
    double days = 0;
    for (uint64_t seed : {21, 22}) {
      ScenarioResult r = run_scenario(clean_scenario(10, seed), c);
      suspects += r.false_suspect;
      days += r.node_days;
    }
    int caught = 0;
    for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
      ScenarioResult r = run_scenario(slowdown_scenario(0.05, seed), c);
      if (r.detect_windows >= 1 && r.detect_windows <= 4) ++caught;
    }
    fmt::print("{:<22} {:>24.3f} {:>23}/{}\n", fmt::format("{:.1f}% ({:.1f})", 100 * t, t / c.mad_floor),
               suspects / days, caught, kSeeds);
  }
}

// One window round of 8 busy GPUs, from a day of generated windows (the generator's cost is not measured).
void BM_DetectorRound(benchmark::State& state) {
  NodeSpec spec;
  spec.seed = 5;
  NodeSimulator sim(spec);
  std::vector<std::vector<GpuWindow>> rounds;
  for (int i = 0; i < 2880; ++i) rounds.push_back(sim.next());
  Detector d;
  std::vector<GpuVerdict> out;
  size_t i = 0;
  for (auto _ : state) {
    d.observe(rounds[i], out);
    benchmark::DoNotOptimize(out.data());
    i = (i + 1) % rounds.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DetectorRound);

}  // namespace

int main(int argc, char** argv) {
  DetectorConfig c;
  fmt::print("== zombie-GPU detector at default settings (30 s windows; fault 10 s into a window, 1 h into a job)\n");
  print_faults(c);
  print_smallest(c);
  print_clean(c);
  print_blips(c);
  print_threshold_sweep();
  fmt::print("\n");
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
