// `gcm schemas`: every record schema (core/schema.h) as Markdown, the source of the generated documentation.
#include <iostream>

#include "cli/command_registry.h"
#include "core/schema.h"

namespace gcm {
namespace {

const bool kSchemasCommandRegistered = register_app_command({
    "schemas",
    "Print every record schema as Markdown",
    "Print every record schema (fields, types, roles, units, Prometheus names) as Markdown.",
    [](CLI::App&) -> CommandRunner {
      return [](const Invocation&) {
        for (const Schema* s : schema_registry()) std::cout << schema_markdown(*s) << "\n";
        return 0;
      };
    },
});

}  // namespace
}  // namespace gcm
