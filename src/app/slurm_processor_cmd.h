// `gcm slurm_processor`: the OTLP enrichment service (processor/service.h) as a command with a [gcm.slurm_processor]
// config table.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

namespace gcm {

struct SlurmProcessorCommand;

// Adds the subcommand and its options to `app`.
std::shared_ptr<SlurmProcessorCommand> add_slurm_processor_command(CLI::App& app);
bool slurm_processor_parsed(const SlurmProcessorCommand& cmd);
// Runs the service until SIGTERM/SIGINT. Returns the exit status. `detach` (gcm -d): into the background once the
// options, config and log are known good, so that a usage error still reaches the terminal.
int run_slurm_processor(SlurmProcessorCommand& cmd, const std::optional<std::string>& config_path,
                        const std::vector<std::string>& default_config_paths, bool detach = false);

}  // namespace gcm
