// The two failures every command maps to an exit status the same way (cli/command_startup.h): a usage error (a bad
// option value or combination, exit 2) and a dependency the host lacks (exit 69, EX_UNAVAILABLE from sysexits.h).
// Each layer throws its own subtype (SinkUsageError, NvmlUnavailable) so that callers can still tell them apart.
#pragma once

#include <stdexcept>
#include <string>

namespace gcm {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The exit status of a command whose dependency is unavailable on this host.
inline constexpr int kExitUnavailable = 69;

struct UnavailableError : std::runtime_error {
  UnavailableError(std::string what_is_missing, const std::string& why)
      : std::runtime_error(why), missing(std::move(what_is_missing)) {}
  std::string missing;  // "NVML": the message reads "<missing> is unavailable: <why>"
};

}  // namespace gcm
