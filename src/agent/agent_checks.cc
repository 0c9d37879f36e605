#include "agent/agent_checks.h"

#include <spdlog/spdlog.h>

#include "agent/agent_schemas.h"

namespace gcm::agent {

void AgentChecks::load(const std::string& suite_path, double interval_s) {
  runner_ = std::make_unique<CheckRunner>(suite_path, "", log_);
  if (runner_->size() > 0)
    log_->info("agent: {} health check(s) from {} every {} s", runner_->size(), suite_path, interval_s);
}

void AgentChecks::maybe_start(bool now, double interval_s) {
  if (!runner_ || runner_->size() == 0) return;
  auto since = [this] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - *started_at_).count();
  };
  if (!now && started_at_ && since() < interval_s) return;
  started_at_ = std::chrono::steady_clock::now();
  runner_->start_round();
}

void AgentChecks::collect(WindowExport& out, AgentCounters& counters) {
  if (!runner_ || runner_->size() == 0) return;
  auto results = runner_->take_results();
  if (results.empty()) return;
  auto& s = counters.source("checks");
  s.up = true;
  for (const auto& r : results) {
    s.last_duration_s = r.end - r.start;
    if (r.timed_out) ++s.timeouts;
    if (r.code != 0) log_->warn("agent: check '{}': {}", r.name, r.message);
    last_[r.name] = r;
  }
  if (out.pushes_otlp())
    for (auto& rec : runner_->records(results)) out.add_log(std::move(rec));
  std::vector<Record> status;
  for (const auto& [name, r] : last_) {
    Record rec(kHealthCheckStatus);
    rec.at("check") = name;
    rec.at("status") = static_cast<int64_t>(r.code);
    rec.at("message") = r.message;
    status.push_back(std::move(rec));
  }
  out.publish(kHealthCheckStatus, status);
}

}  // namespace gcm::agent
