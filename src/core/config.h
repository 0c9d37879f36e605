// The TOML config file (--config): the reference's layout and precedence.
//
//   [gcm]                     options of the root command
//   [gcm.<subcommand>]        options of `gcm <subcommand>`, keyed by parameter name (sink_opts, log_folder, ...)
//   [gcm.<group>.<command>]   nested groups (sacct_backfill new), and [health_checks.<group>.<check>] likewise
//
// Precedence, lowest first: built-in default < config value < command line. A repeated option given on the command
// line replaces the config's list. Unknown keys are warned about (the reference ignores them silently).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <toml++/toml.h>

namespace gcm {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ConfigFile {
 public:
  // Loads `explicit_path`, or the first existing default path. A missing default or /dev/null is an empty config.
  // Invalid TOML throws ConfigError naming the file, line and column. A file without the root table throws
  // ConfigError listing the top-level tables it has.
  static ConfigFile load(const std::optional<std::string>& explicit_path, const std::string& root_table,
                         const std::vector<std::string>& default_paths);
  static ConfigFile from_string(const std::string& text, const std::string& root_table,
                                const std::string& source_name = "<string>");

  // The table for a command path below the root (e.g. {"sacct_backfill", "new"}); nullptr when absent.
  const toml::table* table_for(const std::vector<std::string>& path) const;
  const std::string& path() const { return path_; }
  bool empty() const { return !root_; }
  // The dotted name of a command's table for messages: "gcm.sacct_backfill.new".
  std::string table_name(const std::vector<std::string>& path) const;

 private:
  std::string path_;
  std::string root_name_;
  toml::table doc_;
  const toml::table* root_ = nullptr;
};

// Renders a TOML scalar or array element as the string a command-line argument would carry.
std::optional<std::string> toml_scalar_to_arg(const toml::node& node);

}  // namespace gcm
