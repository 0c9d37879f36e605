// The node-local zombie-GPU detector. The agent calls observe() once per window with the windows of every GPU of
// the node, and gets one verdict per GPU (in the order given). The detector keeps each GPU's history between calls
// (keyed by NVML index; a new UUID at an index starts afresh), and is cheap: a few hundred nanoseconds per GPU.
#pragma once

#include <vector>

#include "detector/config.h"
#include "detector/gpu_window.h"
#include "detector/persistence.h"
#include "detector/throttle_span.h"
#include "detector/verdict.h"

namespace gcm::detector {

class Detector {
 public:
  explicit Detector(DetectorConfig config = {});

  std::vector<GpuVerdict> observe(const std::vector<GpuWindow>& windows);
  // The same, reusing `out`'s storage (the harness calls it millions of times).
  void observe(const std::vector<GpuWindow>& windows, std::vector<GpuVerdict>& out);

  const DetectorConfig& config() const { return config_; }

  // The reasons only a GPU under load can clear (peer_slow, pcie_degraded): held while the GPU idles, so on a node
  // drained for them they would hold for ever. The agent forgives them when its confirmation check, which loads the
  // GPUs, passed on the idle node; the next job judges them afresh.
  static ReasonSet load_only_reasons();
  void forgive_load_only_reasons();

 private:
  struct Track {
    std::string uuid;
    std::string job_id;
    int job_busy_windows = 0;  // busy windows of the current job
    int baseline_windows = 0;  // windows learned into the baseline
    std::array<double, kSignalCount> baseline{};
    int nvlinks_seen = -1;  // the most NVLinks active in any window of this GPU (-1: none reported yet)
    ThrottleSpan throttle;
    Persistence persistence;
  };

  Track& track_of(const GpuWindow& w);
  void compare_peers(const std::vector<GpuWindow>& windows, std::vector<GpuVerdict>& out);
  void update_baselines(const std::vector<GpuWindow>& windows, std::vector<GpuVerdict>& out);

  DetectorConfig config_;
  std::vector<Track> tracks_;                                // by NVML index
  std::vector<Track*> round_;                                // this round's track of each window
  std::vector<char> busy_, judged_, node_effect_, grouped_;  // this round, per window
};

}  // namespace gcm::detector
