#pragma once

namespace gcm {

// Chooses `gcm` or `health_checks` from the program name (argv[0]).
int dispatch_main(int argc, char** argv);
int gcm_main(int argc, char** argv);
int health_checks_main(int argc, char** argv);

}  // namespace gcm
