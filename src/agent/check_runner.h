// The agent's health checks: the [agent] profile of the suite file, run in the agent's own process every
// --check-interval and on demand. Each built-in check runs on a thread of its own; an external command in a process
// of its own under its timeout. A built-in check that overruns its timeout is reported as timed out and abandoned
// (a thread cannot be killed): it is not started again until it returns, and it never holds up sampling, which runs
// on another thread and shares nothing with it but NVML's own (per-call) locking.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/record.h"
#include "suite/suite_file.h"

namespace spdlog {
class logger;
}

namespace gcm::agent {

struct CheckResult {
  std::string name;  // the entry's name in the suite file
  int code = 3;      // Nagios
  std::string message;
  double start = 0, end = 0;  // Unix seconds
  bool timed_out = false;
};

class CheckRunner {
 public:
  // Loads the [agent] profile (or `profile`: the drain's [confirm]) of `suite_path`. A missing file or profile means
  // no checks (said once in the log); a suite file that does not parse, or a check that does not resolve, throws
  // std::runtime_error naming the entry.
  CheckRunner(const std::string& suite_path, std::string cluster, std::shared_ptr<spdlog::logger> log,
              suite::Profile profile = suite::Profile::Agent);
  ~CheckRunner();
  size_t size() const;
  // Starts every check that is not still running from an earlier round. Never blocks.
  void start_round();
  // Results that arrived since the last call, and a timed-out result for each check that passed its timeout.
  std::vector<CheckResult> take_results();
  // HealthCheckLog records of results (the telemetry the suite runners send).
  std::vector<Record> records(const std::vector<CheckResult>& results) const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace gcm::agent
