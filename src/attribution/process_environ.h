// A process's environment as Slurm left it (/proc/<pid>/environ), read under a configurable procfs root.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace gcm {

using Environ = std::map<std::string, std::string, std::less<>>;

// NUL-separated NAME=VALUE entries; a value keeps any '=' after the first (the reference's split on the first '=').
// Entries without '=' are ignored.
Environ parse_environ(std::string_view raw);

// Reads <procfs>/<pid>/environ. nullopt when the process is gone or unreadable (another user's process when not
// root): both are normal races and permissions on a GPU node, not errors.
std::optional<Environ> read_process_environ(const std::string& procfs, uint32_t pid);

}  // namespace gcm
