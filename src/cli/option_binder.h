// Registers CLI options under the reference's parameter names (sink_opts, log_folder, ...) so that a TOML config
// table can fill whatever the command line did not give.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

namespace gcm {

class ConfigFile;

class OptionBinder {
 public:
  explicit OptionBinder(CLI::App& app) : app_(app) {}

  template <typename T>
  CLI::Option* option(const std::string& flags, const std::string& param, T& var, const std::string& help) {
    CLI::Option* o = app_.add_option(flags, var, help);
    bind(param, o);
    return o;
  }
  CLI::Option* flag(const std::string& flags, const std::string& param, bool& var, const std::string& help) {
    CLI::Option* o = app_.add_flag(flags, var, help);
    bind(param, o);
    return o;
  }
  void bind(const std::string& param, CLI::Option* o) { bindings_.emplace_back(param, o); }
  CLI::App& app() { return app_; }
  const std::vector<std::pair<std::string, CLI::Option*>>& bindings() const { return bindings_; }

 private:
  CLI::App& app_;
  std::vector<std::pair<std::string, CLI::Option*>> bindings_;
};

// Every repeatable option of `app` and its subcommands takes exactly one value per occurrence, as click's
// multiple=True options do: `-c gpu_num CLUSTER TYPE` gives -c one value and leaves CLUSTER and TYPE to the
// positionals, wherever the option stands on the line (CLI11's vector options otherwise take every word that
// follows). A value list is given by repeating the option (`-c a -c b`), or with a delimiter where the option has
// one (`--gpus 0,1`). Applied once the command tree is built, so no option added later can miss it.
void one_value_per_occurrence(CLI::App& app);

// Fills options not given on the command line from the command's config table. Warns (through `warn`) about keys
// that are neither an option nor a subcommand table. Throws ConfigError naming the file, table and key when a value
// does not convert.
// shared_keys: keys of this table that its subcommands read (the [gcm] table's slurm_backend): no warning here, and,
// when only_shared is set, the only keys applied (a subcommand taking its defaults from its parent's table).
void apply_config(const ConfigFile& cfg, const std::vector<std::string>& command_path, const OptionBinder& binder,
                  const std::vector<std::string>& subcommand_names, const std::function<void(const std::string&)>& warn,
                  const std::vector<std::string>& shared_keys = {}, bool only_shared = false);

}  // namespace gcm
