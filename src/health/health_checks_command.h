// `health_checks` (the program name, and `gcm health_checks`): the health-check command tree.
#pragma once

#include <map>
#include <string>
#include <vector>

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

}  // namespace gcm
