// `gcm` subcommands that are not collection loops (sacct_publish, fsacct, sacct_backfill): each adds its own
// options to its CLI11 subcommand and returns the function that runs it once the command line is parsed.
#pragma once

#include <functional>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

#include "core/config.h"

namespace gcm {

// Runs the parsed command with the loaded config (for its [gcm.<name>...] tables); returns the exit code.
using CommandRunner = std::function<int(const ConfigFile& config)>;

struct AppCommandSpec {
  std::string name;
  std::string help;
  std::function<CommandRunner(CLI::App& sub)> setup;
};

bool register_app_command(AppCommandSpec spec);
const std::map<std::string, AppCommandSpec>& app_command_registry();

}  // namespace gcm
