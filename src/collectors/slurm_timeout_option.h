// --slurm-timeout, declared one way (option name, config key, range check) by every command that runs Slurm's
// commands: the Slurm collectors and `gcm drainer`.
#pragma once

#include <chrono>

#include "cli/cli_fwd.h"

namespace gcm {

// Adds --slurm-timeout (seconds, positive, within timeout_seconds(), config key slurm_timeout) to a subcommand;
// `help` names the commands it bounds, when the general wording does not fit (sacctmgr, sdiag, the drainer).
void add_slurm_timeout_option(OptionBinder& b, double& seconds, const char* help = nullptr);
std::chrono::milliseconds slurm_timeout_ms(double seconds);

}  // namespace gcm
