// gcm fsacct: registers the wrapper. Every word after `fsacct` is its own (see fsacct.h); -h/--help go to sacct,
// the wrapper's help is --wrapper-help.
#include "cli/command_registry.h"
#include "cli/detach.h"
#include "sacct/fsacct.h"

namespace gcm::sacct {
namespace {

const bool kFsacctCommandRegistered = register_app_command({
    "fsacct",
    "Time-bound-strict sacct wrapper",
    "Time-bound-strict sacct wrapper: with -P, -S/-E and terminal states only, prints only the rows whose End "
    "lies in the window (see `gcm fsacct --wrapper-help`); other command lines run sacct unchanged.",
    nullptr,
    // -h/--help belong to sacct: the words go to the wrapper unparsed.
    [](std::vector<std::string> words, bool detach_asked) {
      if (detach_asked) detach();
      return run_fsacct(words);
    },
});

}  // namespace
}  // namespace gcm::sacct
