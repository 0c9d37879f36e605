#pragma once

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
// `gcm prolog|epilog|healthcheck [options]`: args are the options after the command name.
int suite_main(suite::Profile profile, std::vector<std::string> args);
const char* suite_command_help(suite::Profile p);
std::optional<suite::Profile> suite_profile_of_program(std::string_view program);

}  // namespace gcm
