// The agent's health checks: the suite file's [agent] profile run in rounds every --check-interval (or at once on
// SIGUSR1) by CheckRunner's own thread; each window takes the results that came in, keeps the last one of each check
// for the state file and publishes gcm_health_check_status.
// Owned by the sampling thread (Agent::run); CheckRunner hands results over under its own lock.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_counters.h"
#include "agent/check_runner.h"
#include "agent/window_export.h"

namespace spdlog {
class logger;
}

namespace gcm::agent {

class AgentChecks {
 public:
  explicit AgentChecks(std::shared_ptr<spdlog::logger> log) : log_(std::move(log)) {}

  // Loads the [agent] profile of `suite_path` (none: no checks). Throws for a suite file that does not parse.
  void load(const std::string& suite_path, double interval_s);
  // Starts a round when `now` (SIGUSR1) or when the interval has passed since the last one.
  void maybe_start(bool now, double interval_s);
  // The results since the last call: logged when not OK, into their log records and gcm_health_check_status, and
  // their cost and timeouts into the "checks" source.
  void collect(WindowExport& out, AgentCounters& counters);
  // Each check's last result, by name.
  const std::map<std::string, CheckResult>& last() const { return last_; }

 private:
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<CheckRunner> runner_;
  std::optional<std::chrono::steady_clock::time_point> started_at_;
  std::map<std::string, CheckResult> last_;
};

}  // namespace gcm::agent
