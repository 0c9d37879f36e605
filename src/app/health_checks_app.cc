// `health_checks` (and `gcm health_checks`): the health-check command tree. The checks themselves are not part of
// this build yet; the entry point exists so that the second program name and its help work from the start.
#include <iostream>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "app/commands.h"

namespace gcm {

int health_checks_main(int argc, char** argv) {
  CLI::App app{"GCM health checks: run as Slurm prolog/epilog, Nagios check or from an application. Exit codes: "
               "0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN."};
  app.name("health_checks");
  app.footer(fmt::format("GCM Version: {}\nNo health check is included in this build yet.", GCM_VERSION));
  std::string config;
  app.add_option("--config", config, "TOML config file with [health_checks.<group>.<check>] tables");
  app.set_version_flag("--version", fmt::format("health_checks, version {}", GCM_VERSION));
  app.allow_extras();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (!app.remaining().empty()) {
    std::cerr << "Error: no such health check: " << app.remaining().front()
              << " (this build includes none yet; see 'health_checks --help')\n";
    return 2;
  }
  std::cout << app.help();
  return 0;
}

int dispatch_main(int argc, char** argv) {
  std::string_view self = argc > 0 ? argv[0] : "gcm";
  size_t slash = self.rfind('/');
  if (slash != std::string_view::npos) self.remove_prefix(slash + 1);
  if (self == "health_checks") return health_checks_main(argc, argv);
  return gcm_main(argc, argv);
}

}  // namespace gcm
