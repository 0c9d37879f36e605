// One binary, several names: `gcm`, `health_checks` (the health checks) and gcm-prolog, gcm-epilog,
// gcm-healthcheck (the suite runners, as Slurm's Prolog=, Epilog= and HealthCheckProgram= run them).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
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

namespace {

// The end of the process once the command has returned: its sinks, listeners, threads and files were closed by
// their owners on the way out, and what is left in buffers is written here. The static objects (every registered
// command, check, collector and sink, their options and help) are then left to the kernel rather than destroyed
// one by one: their destructors change nothing outside the process, and running them is a visible share of a
// health check's short process (bench/README.md). The sanitizer builds exit normally, so that the leak checker runs.
[[noreturn]] void finish(int rc) {
  std::cout.flush();
  std::clog.flush();
  std::fflush(nullptr);  // C streams: stdout and every log file (spdlog writes through FILE*)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  std::exit(rc);
#else
  ::_exit(rc);
#endif
}

}  // namespace
}  // namespace gcm

int main(int argc, char** argv) { gcm::finish(gcm::dispatch_main(argc, argv)); }
