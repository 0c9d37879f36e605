// One binary, several names: `gcm`, `health_checks` (the health checks) and gcm-prolog, gcm-epilog,
// gcm-healthcheck (the suite runners, as Slurm's Prolog=, Epilog= and HealthCheckProgram= run them).
#include <string_view>
#include <vector>

#include "app/commands.h"
#include "health/health_checks_command.h"
#include "suite/suite_command.h"

namespace gcm {

int dispatch_main(int argc, char** argv) {
  std::string_view self = argc > 0 ? argv[0] : "gcm";
  size_t slash = self.rfind('/');
  if (slash != std::string_view::npos) self.remove_prefix(slash + 1);
  if (self == "health_checks") return health_checks_main(argc, argv);
  if (auto profile = suite_profile_of_program(self))
    return suite_main(*profile, std::vector<std::string>(argv + 1, argv + argc));
  return gcm_main(argc, argv);
}

}  // namespace gcm

int main(int argc, char** argv) { return gcm::dispatch_main(argc, argv); }
