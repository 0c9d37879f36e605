#include "health/verdict.h"
#include "core/clock.h"

#include <fmt/format.h>

namespace gcm::health {

bool SubChecks::disabled(std::initializer_list<std::string> killswitches) const {
  for (const auto& k : killswitches)
    if (killswitches_.disabled(k)) return true;
  return false;
}

void SubChecks::add(const std::string& health_check, CheckOutcome o, double start_time) {
  CheckOutcome& overall = verdict_.overall;
  // The overall starts UNKNOWN, the mildest rank of worse(): the first part sets it.
  overall.code = worse(overall.code, o.code);
  if (!o.msg.empty()) overall.msg += (overall.msg.empty() ? "" : "\n") + o.msg;
  verdict_.parts.push_back({health_check, std::move(o), start_time});
}

void SubChecks::run(const std::string& health_check, std::initializer_list<std::string> killswitches,
                    const std::function<CheckOutcome()>& fn) {
  run_each(health_check, killswitches, [&](const Emit& emit) { emit(fn()); });
}

void SubChecks::run_each(const std::string& health_check, std::initializer_list<std::string> killswitches,
                         const std::function<void(const Emit&)>& fn) {
  double start = unix_seconds_now();
  if (disabled(killswitches)) {
    add(health_check, {ExitCode::OK, fmt::format("{} is disabled by killswitch.", health_check)}, start);
    return;
  }
  fn([&](const CheckOutcome& o) {
    add(health_check, o, start);
    start = unix_seconds_now();
  });
}

Verdict SubChecks::verdict() && {
  verdict_.overall_record = false;
  return std::move(verdict_);
}

}  // namespace gcm::health
