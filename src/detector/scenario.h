// Runs the detector over a generated stream and measures it: how many windows and seconds after a fault starts
// the faulty GPU reaches degraded (or worse), and how many states were entered that the stream did not call for.
// Shared by the unit tests and bench/detector_report.cc, so the README's table and the tests measure the same.
#pragma once

#include <string>
#include <vector>

#include "detector/config.h"
#include "detector/harness.h"
#include "detector/reasons.h"

namespace gcm::detector::harness {

struct Scenario {
  std::string name;
  NodeSpec node;
  double duration_s = 0;
  bool expect_detection = false;  // the faulty GPU must reach degraded or failed
  Reason expected_reason = Reason::PeerSlow;
};

struct ScenarioResult {
  std::string name;
  double node_days = 0;
  int detect_windows = -1;     // from the window holding the fault's start; -1: never detected
  double detect_seconds = -1;  // from the fault's start to the end of the detecting window
  int detect_state = 0;        // the state reached (2 degraded, 3 failed)
  bool expected_reason_seen = false;
  // States entered by GPUs that were not faulty (or before the fault): "false" states.
  int false_suspect = 0, false_degraded = 0, false_failed = 0;
};

ScenarioResult run_scenario(const Scenario& s, const DetectorConfig& c);

// Faults on GPU 3 of an 8-GPU job, one hour in (10 s into a window), two hours in all.
std::vector<Scenario> fault_scenarios(uint64_t seed = 1);
Scenario slowdown_scenario(double fraction, uint64_t seed);
// `days` of clean, noisy data with jobs coming and going.
Scenario clean_scenario(double days, uint64_t seed);

}  // namespace gcm::detector::harness
