// `health_checks` (the program name, and `gcm health_checks`): the health-check command tree.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli/cli_fwd.h"

namespace gcm {

int health_checks_main(int argc, char** argv);

// What a health_checks command line says, parsed exactly as health_checks_main parses it but without running
// anything (for tests of option placement): the check's path, the root's --detach, and the raw values of every
// option and positional given, by parameter name ("check", "cluster", "type", "--config", ...). `error` holds the
// parse error, if any.
struct ParsedCheckLine {
  std::vector<std::string> path;
  bool detach = false;
  std::map<std::string, std::vector<std::string>> values;
  std::string error;
};
ParsedCheckLine parse_health_checks_line(const std::vector<std::string>& words);

// Calls fn with health_checks' root command line (path {}) and then with each check's command line exactly as
// health_checks builds it to run that check (path {"check-process", "check-zombie"}: the check's own options and
// the common ones), for the test that compares every option with GCM's declarations.
void visit_health_checks_command_lines(
    const std::function<void(const std::vector<std::string>& path, const CLI::App& app)>& fn);

// What a word of a health_checks command line becomes before CLI11 reads it: the reference's one-dash "-gpu"
// (cuda memtest) is "--gpu-devices"; every other word is itself.
std::string health_checks_cli_word(const std::string& word);

}  // namespace gcm
