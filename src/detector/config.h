// Every threshold of the zombie-GPU detector, with its default and why. The defaults were chosen with the harness
// (detector/harness.h, bench/detector_report.cc): they catch a 5 % SM-clock slowdown within 4 windows of 30 s and
// raise no state over 100 simulated node-days of clean, noisy data.
#pragma once

#include <string>
#include <vector>

namespace gcm::detector {

struct DetectorConfig {
  // --- When a GPU counts as busy (peer comparison and the PCIe rule only judge busy GPUs: idle GPUs lower their
  // clocks and PCIe links on purpose). The minimum excludes windows where the job started or ended, when GPUs go
  // idle a few seconds apart and their mean clocks differ for no fault.
  double busy_util_mean_percent = 50;
  double busy_util_min_percent = 20;
  double busy_sm_activity_mean = 0.3;  // GPM, used when utilisation is not reported
  double busy_sm_activity_min = 0.1;

  // --- Peer comparison (the GPUs of the same job on this node).
  int warmup_windows = 4;        // busy windows of the job before comparing: start-up, NCCL init, compilation
  int min_peers = 2;             // other busy GPUs of the job needed (the GPU plus 2 others)
  double slow_deviation = 0.03;  // flag when the SM clock is this far below the peers' median (relative) ...
  double slow_zscore = 3.0;      // ... and the robust z-score is at least this far below
  double mad_floor = 0.01;       // the MAD scale never goes below this fraction of the median: 8 GPUs that agree to
                                 // 0.1 % would otherwise make a 0.5 % wobble a large z
  // Each GPU's usual place among its peers (its deviation, learned in the warm-up, then an EWMA) is taken out
  // before judging, so a GPU that runs 1 % slower by its silicon or drifts 2 % with heat over hours is not a
  // zombie, while a step of 5 % is. The baseline is clamped so a GPU that is slow from the job's start cannot learn
  // its slowness, and frozen while the GPU is flagged so a fault is not learned either.
  int baseline_windows = 20;          // EWMA span (alpha = 1/span): 10 min at 30 s
  double baseline_clamp = 0.02;       // |baseline| of the SM clock at most 2 %
  double other_baseline_clamp = 0.5;  // power and utilisation: stages legitimately differ (13 %, 10 %)
  // A window with a hardware throttle reason set is compared by its samples without one (detector/clock_signal.h);
  // fewer of those than this fraction of the window's samples: its clock is not judged at all (the throttle rule's
  // business). A quarter (7 of 30) keeps the mean's jitter well under the 3 % bar.
  double min_unthrottled_fraction = 0.25;
  // More than this fraction of a GPU's peers deviating too: a node or workload effect, not one bad GPU.
  double max_deviating_peer_fraction = 0.25;

  // --- Absolute rules (no peers needed).
  // Clock-event reasons: the fraction of the last `throttle_span_windows` windows with the reason set must exceed
  // this. Two windows and "more than half" mean a blip shorter than one window never flags, whatever its alignment.
  double throttle_fraction = 0.5;
  int throttle_span_windows = 2;
  double pcie_replays_per_minute = 8;   // DCGM's PCIe replay-rate bound
  double nvlink_crc_per_second = 100;   // CRC errors (all links) per second
  long nvlink_replay_per_window = 0;    // any replay above this flags (replays retransmit: they cost bandwidth)
  long nvlink_recovery_per_window = 0;  // any recovery: the link retrained
  // XIDs whose catalogue immediate action means the GPU needs a reset, a reboot or a technician: failed at once.
  // Other XIDs whose action is not IGNORE flag `xid` (suspect, then degraded if they repeat).
  std::vector<std::string> xid_failed_actions = {"RESET_GPU",       "RESTART_BM",        "RESTART_VM",
                                                 "CONTACT_SUPPORT", "CHECK_MECHANICALS", "WORKFLOW_XID_48"};

  // --- Persistence.
  int degrade_k = 3;       // degraded once k of the last n windows flagged: 3 of 5 reaches degraded 2 windows after
  int degrade_n = 5;       // suspect, so < 2 min at 30 s, while two unlucky windows alone never degrade
  int clear_windows = 10;  // clean windows (per reason) before a reason clears; 5 min at 30 s
  int failed_clear_windows = 60;  // hard faults (lost, DBE, remap failure, reset XIDs) clear after 30 min clean
};

}  // namespace gcm::detector
