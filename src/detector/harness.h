// Generated streams of GpuWindow for the detector's tests and benchmark report: one node of 8 GPUs under load,
// with realistic noise and, optionally, one fault from a given time. Deterministic for a seed (own RNG, so the
// stream is the same with any standard library). Noise model, per GPU and window, with the defaults:
//  - SM clock jitter of +-2 % per 1 s sample (averaged over the window's samples), plus 0.25 % per window;
//  - a static per-GPU offset of up to +-1 % (silicon), and a workload-wide wobble of +-1 % common to the job;
//  - a 2 % slow thermal drift (one GPU, sinusoidal over hours; all GPUs 2 % over a day);
//  - pipeline stages: GPUs 4..7 draw 13 % less power and are 10 % less utilised;
//  - isolated power-brake blips shorter than a window, node-wide (the brake is a board/chassis signal), the clock -30
//  %;
//  - isolated throttle blips of one GPU, 2..15 s, each with its reason bit: HW_POWER_BRAKE (clock -30 %) or
//    HW_SLOWDOWN (clock -50 %), in turn;
//  - jobs of 1..12 h with idle gaps; a job on all 8 GPUs, on two halves, or on 4 GPUs with 4 idle; GPUs start and
//    stop a few seconds apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "detector/gpu_window.h"

namespace gcm::detector::harness {

struct Noise {
  double sample_jitter = 0.02;   // uniform +- per 1 s sample, relative
  double window_noise = 0.0025;  // sd per GPU per window, relative
  double silicon_offset = 0.01;  // uniform +- per GPU
  double common_wobble = 0.01;   // uniform +- per window, the same on all GPUs of the node
  double drift = 0.02;           // one GPU's slow drift amplitude
  double drift_period_s = 8 * 3600;
  double drift_phase_s = 0;  // shifts both drifts: nodes in different racks heat up at different times
  bool pipeline_stages = true;
  double brake_blips_per_hour = 2;  // each 2..25 s
  double gpu_blips_per_hour = 1;    // per GPU, each 2..15 s
  bool jobs = true;                 // false: one job on all GPUs for the whole run
};

enum class Fault {
  None,
  SmClockSlow,  // magnitude: fraction slower (0.05 = -5 %)
  HwSlowdown,   // HW_SLOWDOWN set, clock halved
  HwThermal,    // HW_THERMAL_SLOWDOWN, 92 C, clock -20 %
  PcieWidthX8,
  PcieGen3,
  NvlinkCrc200,  // 200 CRC errors per second
  RowRemapPending,
  EccDbe,    // one double-bit error
  Xid79,     // fallen off the bus: the XID, then lost
  NodeSlow,  // every GPU of the node slower (invisible inside the node: the central part's job)
  NvlinkDown,  // one of the GPU's 18 NVLinks goes inactive (no error counted: the link is simply down)
};

struct FaultSpec {
  Fault kind = Fault::None;
  unsigned gpu = 3;
  double start_s = 0;
  double magnitude = 0;
};

struct NodeSpec {
  uint64_t seed = 1;
  int gpus = 8;
  double window_s = 30;
  int samples_per_window = 30;
  Noise noise;
  FaultSpec fault;
};

class NodeSimulator {
 public:
  explicit NodeSimulator(const NodeSpec& spec);
  // The next window round (all GPUs); valid until the next call.
  const std::vector<GpuWindow>& next();
  double now_s() const { return now_s_; }  // end of the last window, seconds since the start

 private:
  struct Job {
    double start = 0, end = 0;
    std::string id;
  };
  struct Rng {
    uint64_t s;
    uint64_t next_u64();
    double uniform();  // [0, 1)
    double normal();
  };
  void plan_jobs_until(double t);
  // The job id and busy seconds of a GPU in [t0, t1).
  const Job* job_of(unsigned gpu, double t0, double t1, double& busy_s);
  void fill(GpuWindow& w, double t0, double t1);
  double brake_seconds(double t0, double t1) const;
  struct Blip {
    double start = 0, end = 0;
    bool slowdown = false;  // HW_SLOWDOWN; else HW_POWER_BRAKE
  };
  void plan_gpu_blips(double t0);

  NodeSpec spec_;
  Rng rng_;
  double now_s_ = 0;
  std::vector<GpuWindow> windows_;
  std::vector<double> offset_;     // silicon, per GPU
  std::vector<double> start_lag_;  // seconds each GPU starts/stops after the job's edge
  std::vector<Job> jobs_[2];       // per half of the node
  double planned_until_ = 0;
  int next_job_id_ = 1000;
  std::vector<std::pair<double, double>> blips_;
  std::vector<std::vector<Blip>> gpu_blips_;  // per GPU
  int gpu_blip_count_ = 0;
  double wobble_ = 0;
};

}  // namespace gcm::detector::harness
