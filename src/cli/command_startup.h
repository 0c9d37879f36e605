// The one start-up path of the `gcm` commands that run a service or a job of work (collectors, slurm_processor, the
// agent, the drainer, sacct_*, jobstats): fill the options the command line left unset from the config file's
// tables, check them, open the log, report the config warnings on stderr and in the log, detach when asked, run, and
// map every failure to the same exit status:
//   2  a usage error: the config file, an option value (UsageError, its subtypes, std::invalid_argument), the log
//      level; printed as "Error: <message>" before the log exists, so it reaches the terminal;
//   69 a dependency the host lacks (UnavailableError, e.g. NVML): "Error: <what> is unavailable: <why>";
//   1  any other failure of the work itself: logged as critical and printed.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "cli/cli_fwd.h"
#include "cli/command_registry.h"
#include "core/logging.h"
#include "core/usage_error.h"

namespace gcm {

// A config table that fills a binder's options: {"sacct_backfill", "new"} is [gcm.sacct_backfill.new].
struct ConfigTable {
  std::vector<std::string> path;
  const OptionBinder* binder = nullptr;
  // Keys of the table that are subcommand tables or the root's own keys, not unknown options.
  std::vector<std::string> known_subtables = {};
  bool quiet = false;  // its unknown keys are no warning (a parent table that holds keys for other commands)
  // Keys of this table that are shared with subcommands (apply_config); with only_shared, the only ones applied.
  std::vector<std::string> shared_keys = {};
  bool only_shared = false;
};

struct CommandStartup {
  std::string name;  // prefixes log lines: "agent: ..."
  std::vector<ConfigTable> tables;
  // Checks the options once the config has filled them; anything it throws is a usage error (exit 2). Runs before
  // the log is opened.
  std::function<void()> validate = [] {};
  // The log's settings, read once the config has filled the options. Empty: the command has no log file (a report
  // for a terminal); its warnings and errors go to stderr only.
  std::function<LogSetup()> log;
  // What needs the log and must still fail on the terminal (a sink from its -o options): runs once the log is open,
  // before the command detaches; anything it throws is a usage error.
  std::function<void(const std::shared_ptr<spdlog::logger>& log)> prepare = [](const auto&) {};
};

using CommandBody = std::function<int(const std::shared_ptr<spdlog::logger>& log)>;

int run_command(const Invocation& inv, const CommandStartup& startup, const CommandBody& body);

// Runs `parse` (CLI11's parse of `app`, from argv or from words): --help and --version print and give their exit
// status, a parse error is printed with `hint` (the line that says where help is) and gives 2. nullopt: parsed.
std::optional<int> parse_command_line(CLI::App& app, const std::function<void()>& parse, const std::string& hint);

// "Error: <message>" on stderr; returns 2. For usage errors found before run_command (a command's own parse).
int usage_error(const std::string& message);

}  // namespace gcm
