// gcm fsacct: registers the wrapper. Every word after `fsacct` is its own (see fsacct.h); -h/--help go to sacct,
// the wrapper's help is --wrapper-help.
#include "cli/command_registry.h"
#include "sacct/fsacct.h"

namespace gcm::sacct {
namespace {

const bool registered = register_app_command({
    "fsacct",
    "Time-bound-strict sacct wrapper: with -P, -S/-E and terminal states only, prints only the rows whose End "
    "lies in the window (see `gcm fsacct --wrapper-help`); other command lines run sacct unchanged.",
    [](CLI::App& sub) -> CommandRunner {
      sub.set_help_flag();  // -h/--help belong to sacct
      sub.prefix_command();
      sub.allow_extras();
      return [&sub](const ConfigFile&) { return run_fsacct(sub.remaining()); };
    },
});

}  // namespace
}  // namespace gcm::sacct
