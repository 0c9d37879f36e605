// Killswitches (the reference's feature flags): a TOML file whose [HealthChecksFeatures] table sets boolean flags
// such as disable_check_zombie = true. A disabled check exits OK saying so, and still sends its telemetry record.
// Unlike the reference, each check honours its own flag (package-version: disable_package_version, check-module:
// disable_check_module, dcgmi nvlink: disable_dcgmi_nvlink).
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gcm::health {

struct KillswitchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The file exists but cannot be read at all (a directory, no read permission): a usage error, as the reference's
// click.Path(dir_okay=False) makes it, never a silent "every check enabled".
struct KillswitchFileError : KillswitchError {
  using KillswitchError::KillswitchError;
};

class Killswitches {
 public:
  Killswitches() = default;  // no file: every check enabled
  // Throws KillswitchError naming the file for a missing file or a flag that is not a boolean, and
  // KillswitchFileError for a directory or a file that cannot be opened. A file that is not valid TOML leaves every
  // check enabled (the reference's documented fallback); that, and unknown flag names (a typo would silently disable
  // nothing), are reported through `warnings`.
  static Killswitches load(const std::string& path, std::vector<std::string>* warnings = nullptr);
  bool disabled(const std::string& flag) const;
  // Why the file was not loaded (not valid TOML), when that fallback was taken.
  const std::optional<std::string>& load_failure() const { return load_failure_; }

 private:
  std::map<std::string, bool> flags_;
  std::optional<std::string> load_failure_;
};

// Every flag name the project knows (the reference's list).
const std::vector<std::string>& known_killswitch_flags();

}  // namespace gcm::health
