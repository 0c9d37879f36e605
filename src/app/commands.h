#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "suite/suite_file.h"

namespace gcm {

// Chooses `gcm`, `health_checks` or a suite runner (gcm-prolog, gcm-epilog, gcm-healthcheck) from the program name
// (argv[0]).
int dispatch_main(int argc, char** argv);
int gcm_main(int argc, char** argv);
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
// `gcm prolog|epilog|healthcheck [options]`: args are the options after the command name.
int suite_main(suite::Profile profile, std::vector<std::string> args);
std::optional<suite::Profile> suite_profile_of_program(std::string_view program);

}  // namespace gcm
