// The fake GPU libraries' model of a host (the fake NVML, tests/fake_nvml/, and the fake amdsmi,
// tests/fake_amdsmi/): devices described by a JSON scenario file. Values are constants or series (the
// n-th read of a value returns the n-th element, then the last one), so counters grow and temperatures change
// between samples; or schedules over elapsed time ({"schedule": [{"from_s": 0, "value": 1980}, {"from_s": 60,
// "value": 1410}]}, each stage's value itself a constant or a series), optionally with deterministic noise
// ("jitter"). Each library function can be made to fail, be slow or hang, on one device, after some calls.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fake_nvml {

// What differs between the fake libraries that share this model; each library defines kFlavour once.
struct Flavour {
  const char* library;     // for messages: "fake libnvidia-ml"
  const char* env_prefix;  // "GCM_FAKE_NVML": its variables are <prefix>_SCENARIO, _TIME_SCALE, _EPOCH
  int64_t (*error_from_name)(const char* name);  // a fault's "error" name to the library's code; -1 when unknown
  int64_t unknown_error;  // what a call answers when its fault is written wrongly (NVML_ERROR_UNKNOWN, ...)
};
extern const Flavour kFlavour;

struct Fault {
  int64_t error = 0;        // the library's return code to answer with (0: none)
  int64_t delay_ms = 0;     // sleep before answering
  bool hang = false;        // never answer
  int64_t after_calls = 0;  // the first `after_calls` calls behave normally (and "for_calls": N limits the fault
                            // to the N calls after those)
};

struct XidEvent {
  unsigned long long xid = 0;
  int64_t at_ms = 0;  // delivered once this long has passed since the device's events were registered
  bool delivered = false;
};

// Scenario time: seconds since the epoch, divided by the time scale. The epoch is the moment the scenario was loaded
// (the first nvmlInit of the process), or $GCM_FAKE_NVML_EPOCH (Unix time in seconds, so several processes, or an
// agent that restarts, share one timeline; the fake amdsmi's variables start GCM_FAKE_AMDSMI_). The time scale is
// the scenario's "time_scale" or $GCM_FAKE_NVML_TIME_SCALE (which wins): 0.01 runs a 60 s scenario in 0.6 s of real time.
struct Clock {
  std::chrono::steady_clock::time_point loaded_at = std::chrono::steady_clock::now();
  bool wall_epoch = false;
  double epoch_unix_s = 0;
  double time_scale = 1.0;
  uint64_t seed = 1;  // the scenario's "seed": noise is a function of it, the value's place and its read number
  double now_s() const;
};

// One GPU (or one MIG device, with `parent` set). Handles given to callers are pointers to these.
struct Device {
  const Clock* clock = nullptr;
  Device* parent = nullptr;
  unsigned index = 0;
  nlohmann::json spec;  // the scenario's object for this device
  std::vector<std::unique_ptr<Device>> mig;
  std::vector<XidEvent> xids;
  std::chrono::steady_clock::time_point events_registered_at{};
  bool events_registered = false;

  std::mutex m;                          // guards the counters below
  std::map<std::string, int64_t> reads;  // per value key
  std::map<std::string, int64_t> calls;  // per function

  // The value `key` (dotted path into spec) for this read: constant, the next element of a series, or a schedule's
  // stage at scenario time `at_s` (now when negative). Returns false when the scenario does not have it (the
  // function then answers NOT_SUPPORTED). Never throws (schedules were checked at load).
  bool read(const std::string& key, nlohmann::json* out, double at_s = -1);
  // Counts a call of `function` and returns the fault configured for it (if it applies to this call).
  Fault fault_for(const std::string& function);
};

// Where a device sits in the scenario, for messages: "devices[1]", "devices[0].mig.devices[2]".
std::string describe(const Device& d);

struct Scenario {
  Clock clock;
  nlohmann::json spec;
  std::vector<std::unique_ptr<Device>> devices;
  Device global;  // faults and counters of functions without a device (nvmlInit_v2, nvmlDeviceGetCount_v2, ...)
};

// Loads the scenario named by $GCM_FAKE_NVML_SCENARIO (the flavour's prefix). Returns null (and prints why to stderr) on failure.
// Scenarios are never freed: a thread that a test left sleeping in a "slow" call may still use one later.
Scenario* load_scenario();

}  // namespace fake_nvml
