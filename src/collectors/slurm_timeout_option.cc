#include "collectors/slurm_timeout_option.h"

#include <cstdint>

#include "cli/option_binder.h"
#include "cli/option_limits.h"

namespace gcm {

void add_slurm_timeout_option(OptionBinder& b, double& seconds, const char* help) {
  b.option("--slurm-timeout", "slurm_timeout", seconds,
           help ? help
                : "Seconds each Slurm command may run; a command still running then is killed (its whole process "
                  "group) and the round fails naming it.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber)
      ->check(timeout_seconds());
}

std::chrono::milliseconds slurm_timeout_ms(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace gcm
