// The program's entry: one binary, several names.
#pragma once

namespace gcm {

// Chooses `gcm`, `health_checks` or a suite runner (gcm-prolog, gcm-epilog, gcm-healthcheck) from the program name
// (argv[0]).
int dispatch_main(int argc, char** argv);
// `gcm`: every registered command (cli/command_registry.h).
int gcm_main(int argc, char** argv);

}  // namespace gcm
