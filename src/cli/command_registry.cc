#include "cli/command_registry.h"

#include <cstdio>
#include <cstdlib>

namespace gcm {

namespace {
std::map<std::string, AppCommandSpec>& commands() {
  static std::map<std::string, AppCommandSpec> r;
  return r;
}
}  // namespace

bool register_app_command(AppCommandSpec spec) {
  std::string name = spec.name;
  if (!commands().emplace(name, std::move(spec)).second) {
    std::fprintf(stderr, "gcm: command '%s' registered twice\n", name.c_str());
    std::abort();
  }
  return true;
}

const std::map<std::string, AppCommandSpec>& app_command_registry() { return commands(); }

}  // namespace gcm
