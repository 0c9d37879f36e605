// What the detector says about one GPU after one window: its state, the reasons that hold, how it compares with
// its peers, and, when the state changed, an event with the evidence for a LOG record and a drain decision.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "detector/reasons.h"

namespace gcm::detector {

// The exported numbers are a contract (gcm_gpu_health_state): 0 ok, 1 suspect, 2 degraded, 3 failed.
enum class HealthState : int { Ok = 0, Suspect = 1, Degraded = 2, Failed = 3 };
const char* to_string(HealthState s);

// The signals compared with peers. Only the SM clock convicts; power and utilisation corroborate.
enum class Signal : int { SmClock = 0, Power = 1, GpuUtil = 2, Count = 3 };
inline constexpr int kSignalCount = static_cast<int>(Signal::Count);
const char* signal_name(Signal s);  // "sm_clock", "power", "gpu_util": the `signal` label

struct SignalDeviation {
  bool evaluated = false;    // false: no comparison this window (idle, warm-up, no job, too few peers)
  double value = 0;          // the GPU's normalised value (SM clock / max SM clock, power / limit, utilisation %)
  double peer_median = 0;    // the median of its peers' values
  double raw_deviation = 0;  // value / peer_median - 1
  double baseline = 0;       // the GPU's usual deviation during this job
  double deviation = 0;      // (1 + raw) / (1 + baseline) - 1: what is judged and exported
  double zscore = 0;         // robust z of the baseline-corrected value against the peers
};

struct HealthEvent {
  HealthState from = HealthState::Ok, to = HealthState::Ok;
  ReasonSet reasons;        // active after the change
  int flagged_windows = 0;  // of the last `degrade_n`
  int peers = 0;            // peers compared with (0: none)
  std::string evidence;     // one line for people: values, peers' median, z, deviation, windows
};

struct GpuVerdict {
  unsigned gpu = 0;
  std::string uuid;
  std::string job_id;
  int64_t end_unix_ms = 0;
  HealthState state = HealthState::Ok;
  ReasonSet reasons;        // active reasons (a reason holds until it has been clean for clear_windows)
  ReasonSet flagged_now;    // reasons flagged by this window alone
  int flagged_windows = 0;  // flagged windows among the last degrade_n
  int peers = 0;
  std::array<SignalDeviation, kSignalCount> signals{};
  std::string evidence;              // "" when ok; else why (built only then: the detector runs millions of times)
  std::optional<HealthEvent> event;  // set when the state changed in this window
};

}  // namespace gcm::detector
