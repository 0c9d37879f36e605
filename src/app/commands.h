// The program's entry: one binary, several names.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "cli/cli_fwd.h"

namespace gcm {

// Chooses `gcm`, `health_checks` or a suite runner (gcm-prolog, gcm-epilog, gcm-healthcheck) from the program name
// (argv[0]).
int dispatch_main(int argc, char** argv);
// `gcm`: every registered command (cli/command_registry.h).
int gcm_main(int argc, char** argv);
// Builds gcm's whole command line (the root's options and every command's, as gcm builds the one it runs) and calls
// fn with each command line, the root first (path {}), then each command and its subcommands ({"sacct_backfill",
// "new"}), for the test that compares every option with GCM's declarations. A command with a parser of its own
// (fsacct, health_checks) comes with no options.
void visit_gcm_command_lines(const std::function<void(const std::vector<std::string>& path, const CLI::App& app)>& fn);

}  // namespace gcm
