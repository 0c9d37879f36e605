// `gcm prolog`, `gcm epilog`, `gcm healthcheck` and the program names gcm-prolog, gcm-epilog, gcm-healthcheck.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "suite/suite_file.h"

namespace gcm {

// args: the options after the command name.
int suite_main(suite::Profile profile, std::vector<std::string> args);
std::optional<suite::Profile> suite_profile_of_program(std::string_view program);

}  // namespace gcm
