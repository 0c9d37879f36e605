// Runs an external tool for a check with the reference's conventions for the results the checks judge: a timeout
// reads as exit code 128 with "Error command timeout because of timeout setting.", a tool that cannot be started
// as exit code 127 with a message naming it and PATH (the shell's "command not found").
#pragma once

#include <string>
#include <vector>

#include "core/subprocess.h"

namespace gcm::health {

constexpr int kToolTimedOut = 128;
constexpr int kToolNotFound = 127;

CommandResult run_tool(const std::vector<std::string>& argv, double timeout_s,
                       const std::vector<std::string>& extra_env = {});

// Splits an option value such as "-mca coll_hcoll_enable 0 --bind-to numa" into words (spaces, tabs; single and
// double quotes group, as a shell would without expansions).
std::vector<std::string> split_words(const std::string& s);

}  // namespace gcm::health
