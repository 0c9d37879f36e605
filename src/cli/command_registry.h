// Every `gcm` subcommand registers itself here, from the file that implements it (a static initialiser, as the
// sinks and record schemas do): the collectors through register_collector (collectors/collector.h), the others
// directly. app/gcm_app.cc only builds the command line from this registry and runs what was chosen.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_fwd.h"
#include "core/config.h"

namespace gcm {

// What the root command line gives the chosen command.
struct Invocation {
  const ConfigFile& config;  // --config, else the first default file that exists (kGcmConfigPaths)
  // Problems the root found in the config (a --config file that does not exist, unknown keys of [gcm]): the
  // command reports them once its log is open.
  std::vector<std::string> warnings;
  bool detach = false;  // gcm -d/--detach, or `detach = true` in [gcm]
  // gcm --backend nvml|amdsmi|auto, or `backend = ...` in [gcm]: the GPU library of the GPU commands (unset: each
  // command's own default).
  std::optional<std::string> gpu_backend;
};

// Runs the parsed command; returns its exit code. Most commands hand their start-up to run_command
// (cli/command_startup.h).
using CommandRunner = std::function<int(const Invocation&)>;
// A command with a parser of its own (health_checks, prolog, epilog, healthcheck: their program names reach the same
// parser): gets the words after its name unparsed, --help included, and the root's -d.
using WordsRunner = std::function<int(std::vector<std::string> words, bool detach)>;

struct AppCommandSpec {
  std::string name;
  std::string summary;  // its line in `gcm --help`: one short line, no full stop
  std::string help;     // the paragraph that heads `gcm <name> --help`
  // Adds the command's options to its subcommand and returns the function that runs it. Empty for a WordsRunner.
  std::function<CommandRunner(CLI::App& sub)> setup;
  WordsRunner run_words;
};

bool register_app_command(AppCommandSpec spec);
const std::map<std::string, AppCommandSpec>& app_command_registry();

// The config files tried when --config is not given, in order.
inline const std::vector<std::string> kGcmConfigPaths = {"/etc/gcm/config.toml", "/etc/fb-gcm/config.toml"};

}  // namespace gcm
