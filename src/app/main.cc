// One binary, two names: `gcm` (collectors) and `health_checks` (the same program under a second name).
#include "app/commands.h"

int main(int argc, char** argv) { return gcm::dispatch_main(argc, argv); }
