// What a check returns: its verdict. A check never prints, sends telemetry or exits by itself; CheckRun (check.h)
// turns a Verdict into the stdout line, the HealthCheckLog records and the exit code, so the suite runners and the
// node agent can run any check in-process and read what it found.
#pragma once

#include <chrono>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "health/exit_code.h"
#include "core/clock.h"
#include "health/killswitches.h"

namespace gcm::health {

struct CheckOutcome {
  ExitCode code = ExitCode::UNKNOWN;
  std::string msg;
};

// One sub-check's own record (check-nvidia-smi's "nvidia smi gpu_num", one "check dcgmi nvlink error" per GPU).
struct SubVerdict {
  std::string health_check;
  CheckOutcome outcome;
  double start_time = 0;
};

struct Verdict {
  Verdict() = default;
  Verdict(CheckOutcome o) : overall(std::move(o)) {}  // NOLINT: a plain check's verdict is its one outcome
  Verdict(ExitCode code, std::string msg) : overall{code, std::move(msg)} {}

  CheckOutcome overall;           // the stdout line (and the record, unless overall_record is false)
  std::vector<SubVerdict> parts;  // each its own record, sent before the stdout line
  // The reference's checks made of sub-checks send one record per sub-check and none for the whole: the overall
  // outcome is only the stdout line and the exit code.
  bool overall_record = true;
};

// Builds the verdict of a check made of sub-checks: applies each sub-check's killswitches, times it, and makes the
// overall outcome (the worst code, the non-empty messages one per line) the way the reference did.
class SubChecks {
 public:
  using Emit = std::function<void(const CheckOutcome&)>;

  explicit SubChecks(const Killswitches& killswitches) : killswitches_(killswitches) {}

  // One record named `health_check`; any of `killswitches` set makes it "<name> is disabled by killswitch." (OK).
  void run(const std::string& health_check, std::initializer_list<std::string> killswitches,
           const std::function<CheckOutcome()>& fn);
  // Several records of one name (one per GPU): fn emits each; each record's start is the end of the one before.
  void run_each(const std::string& health_check, std::initializer_list<std::string> killswitches,
                const std::function<void(const Emit&)>& fn);
  Verdict verdict() &&;

 private:
  bool disabled(std::initializer_list<std::string> killswitches) const;
  void add(const std::string& health_check, CheckOutcome o, double start_time);

  const Killswitches& killswitches_;
  Verdict verdict_;
};


}  // namespace gcm::health
