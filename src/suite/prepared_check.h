// One check of a suite profile, resolved and configured before anything runs: a built-in check found by its
// command path in the health-check registry, with its args and options parsed as `health_checks` would parse them,
// or an external command. The suite runners (runner.h) and `gcm agent` (agent/check_runner.h) both start from it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cli/cli_fwd.h"
#include "health/check.h"
#include "suite/suite_file.h"

namespace gcm::suite {

struct Prepared {
  const CheckEntry* entry = nullptr;
  const health::HealthCheckSpec* spec = nullptr;  // null for an external command
  std::unique_ptr<CLI::App> app;
  std::unique_ptr<OptionBinder> binder;
  std::unique_ptr<health::HealthCheck> check;
  int64_t timeout_opt = 300;

  Prepared();
  ~Prepared();  // out of line: CLI::App and OptionBinder are complete only in prepared_check.cc
};

// Every check of the profile; throws SuiteError naming the entry (an unknown check, a bad argument or option).
std::vector<std::unique_ptr<Prepared>> prepare(const ProfileSpec& spec);

}  // namespace gcm::suite
