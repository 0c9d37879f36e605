#include "detector/harness.h"

#include <algorithm>
#include <cmath>

namespace gcm::detector::harness {

namespace {

constexpr double kMaxClockMhz = 1980;  // H100 SXM
constexpr double kLoadClock = 0.93;    // under load, power-managed, relative to max
constexpr double kIdleClock = 345 / kMaxClockMhz;
constexpr double kPowerLimitW = 700;
constexpr int64_t kEpochMs = 1'700'000'000'000;
constexpr double kPi = 3.14159265358979323846;

FieldStats stats(double mean, double min, double max, int samples) {
  FieldStats s;
  s.mean = mean;
  s.min = std::min(min, mean);
  s.max = std::max(max, mean);
  s.last = mean;
  s.samples = samples;
  return s;
}

double overlap(double a0, double a1, double b0, double b1) {
  return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
}

}  // namespace

uint64_t NodeSimulator::Rng::next_u64() {  // splitmix64
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double NodeSimulator::Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double NodeSimulator::Rng::normal() {  // Box-Muller, one of the pair (simple, and fast enough here)
  double u1 = std::max(uniform(), 1e-300), u2 = uniform();
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * kPi * u2);
}

NodeSimulator::NodeSimulator(const NodeSpec& spec) : spec_(spec), rng_{spec.seed * 0x2545f4914f6cdd1dull + 7} {
  windows_.resize(static_cast<size_t>(spec_.gpus));
  gpu_blips_.resize(static_cast<size_t>(spec_.gpus));
  for (int g = 0; g < spec_.gpus; ++g) {
    GpuWindow& w = windows_[static_cast<size_t>(g)];
    w.gpu = static_cast<unsigned>(g);
    w.uuid = "GPU-" + std::to_string(spec_.seed) + "-0000-0000-0000-00000000000" + std::to_string(g);
    offset_.push_back((2 * rng_.uniform() - 1) * spec_.noise.silicon_offset);
    start_lag_.push_back(5 * rng_.uniform());
  }
  if (!spec_.noise.jobs) {
    for (auto& half : jobs_) half.push_back({0, 1e18, "1"});
    planned_until_ = 1e18;
  }
}

void NodeSimulator::plan_jobs_until(double t) {
  while (planned_until_ < t + 86400) {
    double start = planned_until_ + 300 + 1500 * rng_.uniform();  // an idle gap of 5..30 min
    double kind = rng_.uniform();
    auto len = [&] { return 3600 * (1 + 11 * rng_.uniform()); };
    auto id = [&] { return std::to_string(next_job_id_++); };
    double end = start;
    if (kind < 0.7) {  // one job on all GPUs
      Job j{start, start + len(), id()};
      jobs_[0].push_back(j);
      jobs_[1].push_back(j);
      end = j.end;
    } else if (kind < 0.9) {  // a job on each half
      Job a{start, start + len(), id()}, b{start + 60, start + 60 + len(), id()};
      jobs_[0].push_back(a);
      jobs_[1].push_back(b);
      end = std::max(a.end, b.end);
    } else {  // 4 GPUs busy, 4 idle
      Job a{start, start + len(), id()};
      jobs_[0].push_back(a);
      end = a.end;
    }
    planned_until_ = end;
  }
  for (auto& half : jobs_) {  // forget jobs long over
    while (!half.empty() && half.front().end + 3600 < t) half.erase(half.begin());
  }
}

const NodeSimulator::Job* NodeSimulator::job_of(unsigned gpu, double t0, double t1, double& busy_s) {
  const auto& half = jobs_[gpu < static_cast<unsigned>(spec_.gpus) / 2 ? 0 : 1];
  busy_s = 0;
  const Job* attributed = nullptr;
  double lag = start_lag_[gpu];
  for (const auto& j : half) {
    busy_s += overlap(t0, t1, j.start + lag, j.end + lag);
    if (t1 > j.start && t1 <= j.end) attributed = &j;  // attribution at the window's end
  }
  return attributed;
}

double NodeSimulator::brake_seconds(double t0, double t1) const {
  double s = 0;
  for (const auto& b : blips_) s += overlap(t0, t1, b.first, b.second);
  return s;
}

void NodeSimulator::fill(GpuWindow& w, double t0, double t1) {
  const Noise& nz = spec_.noise;
  const FaultSpec& f = spec_.fault;
  const double win = t1 - t0;
  const int n = spec_.samples_per_window;
  const bool stage_b = nz.pipeline_stages && w.gpu >= static_cast<unsigned>(spec_.gpus) / 2;
  double busy_s = 0;
  const Job* job = job_of(w.gpu, t0, t1, busy_s);
  w.job_id = job ? job->id : std::string();
  w.end_unix_ms = kEpochMs + static_cast<int64_t>(t1 * 1000);
  w.seconds = win;
  w.samples = n;
  w.presence = Presence::Ok;
  w.xids.clear();
  const double busy = busy_s / win;
  const bool faulty = f.kind != Fault::None && (f.gpu == w.gpu || f.kind == Fault::NodeSlow);
  const double fo = faulty ? overlap(t0, t1, f.start_s, 1e18) / win : 0;  // fault's share of the window
  const bool fault_now = faulty && t1 > f.start_s;

  if (f.kind == Fault::Xid79 && faulty && t0 >= f.start_s) {  // after the XID the GPU is gone
    w = GpuWindow{w.gpu, w.uuid, w.end_unix_ms, win, n, Presence::Lost, w.job_id};
    return;
  }

  // This GPU's own throttle blips, each with its reason bit (a scrape, one sample, sees a blip or misses it).
  double gpu_brake = 0, gpu_slowdown = 0;
  for (const auto& b : gpu_blips_[w.gpu]) {
    double o = n == 1 ? (overlap(t1 - 1e-3, t1, b.start, b.end) > 0 ? 1 : 0) : overlap(t0, t1, b.start, b.end) / win;
    (b.slowdown ? gpu_slowdown : gpu_brake) += o;
  }

  // SM clock relative to max while busy, then the window's mean with its idle part.
  const double td = t1 + nz.drift_phase_s;
  double drift_gpu = w.gpu == 5 ? nz.drift * 0.5 * (1 - std::cos(2 * kPi * td / nz.drift_period_s)) : 0;
  double drift_all = nz.drift * 0.5 * (1 - std::cos(2 * kPi * td / 86400));
  double jitter_mean = nz.sample_jitter / std::sqrt(3.0 * n) * rng_.normal();
  double clock = kLoadClock * (1 + wobble_) * (1 + offset_[w.gpu]) * (1 - drift_all) * (1 - drift_gpu) *
                 (1 + nz.window_noise * rng_.normal() + jitter_mean);
  // One sample per window is one reading at the window's end (a scrape), which a blip either covers or misses.
  double brake = n == 1 ? (brake_seconds(t1 - 1e-3, t1) > 0 ? 1 : 0) : brake_seconds(t0, t1) / win;
  double slow = 0, unexplained = 0;  // the fault's slowdown; the part of it no reason bit explains
  if (f.kind == Fault::SmClockSlow || f.kind == Fault::NodeSlow) slow = unexplained = f.magnitude * fo;
  if (f.kind == Fault::HwSlowdown) slow = 0.5 * fo;
  if (f.kind == Fault::HwThermal) slow = 0.2 * fo;
  if (!faulty) slow = unexplained = 0;
  // The samples with no HW reason bit run at the clock without the throttles, but with a slowdown no bit explains.
  double clock_unthrottled = clock * (1 - unexplained);
  clock *= (1 - 0.3 * brake) * (1 - slow) * (1 - 0.3 * gpu_brake - 0.5 * gpu_slowdown);
  double hw_fault = faulty && (f.kind == Fault::HwSlowdown || f.kind == Fault::HwThermal) ? fo : 0;
  double throttled = std::min(1.0, brake + gpu_brake + gpu_slowdown + hw_fault);
  double clock_mean = busy * clock + (1 - busy) * kIdleClock;
  double clock_min = busy < 1 ? kIdleClock : clock * (1 - nz.sample_jitter);
  w.sm_clock_mhz = stats(clock_mean * kMaxClockMhz, clock_min * kMaxClockMhz,
                         (busy > 0 ? clock * (1 + nz.sample_jitter) : kIdleClock) * kMaxClockMhz, n);
  int unthrottled_samples = n - static_cast<int>(std::lround(n * throttled));
  if (unthrottled_samples > 0) {
    double m = busy * clock_unthrottled + (1 - busy) * kIdleClock;
    w.sm_clock_unthrottled_mhz = stats(m * kMaxClockMhz, (busy < 1 ? kIdleClock : m) * kMaxClockMhz,
                                       m * kMaxClockMhz, unthrottled_samples);
  } else {
    w.sm_clock_unthrottled_mhz.reset();
  }
  w.max_sm_clock_mhz = stats(kMaxClockMhz, kMaxClockMhz, kMaxClockMhz, n);

  double util = std::min(100.0, (stage_b ? 88.2 : 98.0) + rng_.normal());
  w.gpu_util_percent = stats(busy * util, busy < 1 ? 0 : util - 5, busy > 0 ? 100 : 0, n);
  w.mem_util_percent = stats(busy * 40, 0, busy > 0 ? 60 : 0, n);
  double power = (stage_b ? 0.87 : 1.0) * 0.85 * (1 - slow) * (1 + 0.01 * rng_.normal());
  double power_mean = (busy * power + (1 - busy) * 0.1) * kPowerLimitW;
  w.power_watts = stats(power_mean, power_mean * 0.8, power_mean * 1.1, n);
  w.power_limit_watts = stats(kPowerLimitW, kPowerLimitW, kPowerLimitW, n);
  double temp = f.kind == Fault::HwThermal && fault_now ? 92 : 45 + 25 * busy + rng_.normal();
  w.temperature_celsius = stats(temp, temp - 2, temp + 2, n);
  w.slowdown_temperature_celsius = 90;

  w.hw_slowdown_fraction = std::min(1.0, (f.kind == Fault::HwSlowdown && faulty ? fo : 0) + gpu_slowdown);
  w.hw_thermal_fraction = f.kind == Fault::HwThermal && faulty ? fo : 0;
  w.power_brake_fraction = std::min(1.0, brake + gpu_brake);
  w.sw_power_cap_fraction = busy > 0.5 ? 0.3 : 0;

  // Idle links train down to save power (ASPM): only a busy GPU's link below max is a fault.
  w.pcie_gen_max = 5;
  w.pcie_width_max = 16;
  w.pcie_gen = f.kind == Fault::PcieGen3 && fault_now ? 3 : (busy > 0 ? 5 : 1);
  w.pcie_width = f.kind == Fault::PcieWidthX8 && fault_now ? 8 : 16;
  w.pcie_replays = rng_.uniform() < 0.001 ? 1 : 0;
  w.nvlink_crc_errors = static_cast<int64_t>((f.kind == Fault::NvlinkCrc200 && faulty ? 200 * fo * win : 0) +
                                             (rng_.uniform() < 0.001 ? 3 : 0));
  w.nvlink_replay_errors = 0;
  w.nvlink_recovery_errors = 0;
  w.nvlink_links_active = f.kind == Fault::NvlinkDown && faulty && t1 > f.start_s ? 17 : 18;
  w.ecc_uncorrected_volatile = f.kind == Fault::EccDbe && faulty && t0 <= f.start_s && f.start_s < t1 ? 1 : 0;
  w.remapped_rows_pending = f.kind == Fault::RowRemapPending && fault_now ? 1 : 0;
  w.remapped_rows_failure = 0;
  if (f.kind == Fault::Xid79 && faulty && t0 <= f.start_s && f.start_s < t1) {
    w.xids.push_back({79, "RESTART_BM", true});
  }
}

// Each GPU's blips are isolated too: none within two windows of its last one or of a node-wide blip.
void NodeSimulator::plan_gpu_blips(double t0) {
  if (spec_.noise.gpu_blips_per_hour <= 0) return;  // no draws: the stream is the one without GPU blips
  const double w = spec_.window_s;
  bool node_quiet = blips_.empty() || blips_.back().second + 2 * w < t0;
  for (auto& g : gpu_blips_) {
    while (g.size() > 1 && g.front().end < t0) g.erase(g.begin());
    bool quiet = node_quiet && (g.empty() || g.back().end + 2 * w < t0);
    if (!quiet || rng_.uniform() >= spec_.noise.gpu_blips_per_hour * w / 3600) continue;
    double start = t0 + w * rng_.uniform();
    g.push_back({start, start + 2 + 13 * rng_.uniform(), (gpu_blip_count_++ % 2) == 1});
  }
}

const std::vector<GpuWindow>& NodeSimulator::next() {
  double t0 = now_s_, t1 = now_s_ + spec_.window_s;
  plan_jobs_until(t1);
  // Node-wide power-brake blips, each shorter than a window.
  while (blips_.size() > 1 && blips_.front().second < t0) blips_.erase(blips_.begin());
  // Blips are isolated: none starts within two windows of the last one's end (two in a minute is a brake episode,
  // which the rule must catch, not noise).
  bool quiet = blips_.empty() || blips_.back().second + 2 * spec_.window_s < t0;
  if (spec_.noise.gpu_blips_per_hour > 0)  // nor within two windows of a GPU's own blip: together, an episode
    for (const auto& g : gpu_blips_) quiet = quiet && (g.empty() || g.back().end + 2 * spec_.window_s < t0);
  if (quiet && rng_.uniform() < spec_.noise.brake_blips_per_hour * spec_.window_s / 3600) {
    double start = t0 + spec_.window_s * rng_.uniform();
    blips_.push_back({start, start + 2 + 23 * rng_.uniform()});
  }
  plan_gpu_blips(t0);
  wobble_ = (2 * rng_.uniform() - 1) * spec_.noise.common_wobble;
  for (auto& w : windows_) fill(w, t0, t1);
  now_s_ = t1;
  return windows_;
}

}  // namespace gcm::detector::harness
