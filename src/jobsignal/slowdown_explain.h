// The explanation of a job's slowdown (docs/reference/job-signals.md, "Job slowdowns"): the hardware evidence on the
// job's GPUs on the node that started within two windows of the change point, ranked, and the slowest rank, in one
// sentence: "step time of job 4242 rose 12 % at 14:02; rank 19 (GPU 3 on node50) has been the slowest since 14:01,
// when its SM clock fell 11 % under HW thermal slowdown", or "... no hardware cause found on the job's GPUs".
// It keeps what each GPU showed over the last windows (bounded), fed once per window with the detector's input.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "detector/gpu_window.h"
#include "jobsignal/rank_slow.h"
#include "jobsignal/step_change.h"

namespace gcm::jobsignal {

// One piece of evidence, ranked by weight (the more a cause stretches a step by itself, the higher).
struct SlowdownFinding {
  int weight = 0;
  int gpu = -1;
  int64_t start_window = 0;
  std::string kind;  // hw_thermal, hw_slowdown, power_brake, sw_thermal, sw_power_cap, clock_drop, xid, nvlink_errors,
                     // pcie_replays, pcie_aer
  std::string text;  // "its SM clock fell 11 % under HW thermal slowdown"
};

struct SlowdownExplanation {
  std::vector<SlowdownFinding> findings;  // best first
  int64_t rank = -1;                      // the slowest rank (-1: none named)
  int gpu = -1;
  bool hardware_cause() const { return !findings.empty(); }
  std::string sentence;
};

class SlowdownExplainer {
 public:
  explicit SlowdownExplainer(size_t keep_windows = 24) : keep_(keep_windows) {}

  // The window's GPUs (the detector's input) and rank judgements, under the caller's window number.
  void observe(int64_t window, const std::vector<detector::GpuWindow>& gpus, const std::vector<RankJudgement>& ranks);

  // Explains a change of job `job_id`, whose ranks ran on `job_gpus` (NVML indices); `slowest` is the rank the
  // summary names slowest now (with its GPU), used when no rank was judged slow.
  SlowdownExplanation explain(const std::string& job_id, const StepChange& change, const std::vector<int>& job_gpus,
                              int64_t slowest_rank, int slowest_gpu, const std::string& hostname) const;

  // The end of a window, Unix ms (0: not kept).
  int64_t window_end_ms(int64_t window) const;

 private:
  struct Seen {
    int64_t window = 0;
    int64_t end_ms = 0;
    std::map<int, detector::GpuWindow> gpus;
    std::map<std::pair<std::string, int64_t>, int> slow_ranks;  // (job, rank) -> GPU, judged slow this window
  };
  size_t keep_;
  std::deque<Seen> seen_;
};

// "14:02" (UTC) for a Unix time in ms.
std::string clock_minutes(int64_t unix_ms);

}  // namespace gcm::jobsignal
