#include "cli/option_binder.h"

#include <fmt/format.h>

#include "core/config.h"

namespace gcm {

void one_value_per_occurrence(CLI::App& app) {
  // Only named options: a positional that takes the rest of the line (a file list) keeps doing so.
  for (CLI::Option* opt : app.get_options([](CLI::Option* o) { return o->nonpositional(); })) {
    if (opt->get_items_expected_max() <= 1) continue;
    opt->allow_extra_args(false);
    // CLI11's help would still write "TEXT ...", which reads as "several words after the option".
    if (opt->get_option_text().empty()) {
      std::string text = opt->get_type_name();  // the formatter puts the space before it
      if (!opt->get_default_str().empty()) text += "=" + opt->get_default_str();
      text += " (repeatable)";
      if (opt->get_required()) text += " REQUIRED";
      opt->option_text(text);
    }
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) one_value_per_occurrence(*sub);
}

void apply_config(const ConfigFile& cfg, const std::vector<std::string>& command_path, const OptionBinder& binder,
                  const std::vector<std::string>& subcommand_names, const std::function<void(const std::string&)>& warn,
                  const std::vector<std::string>& shared_keys, bool only_shared) {
  const toml::table* table = cfg.table_for(command_path);
  if (!table) return;
  std::string table_name = cfg.table_name(command_path);
  for (const auto& [key_node, node] : *table) {
    std::string key(key_node.str());
    bool shared = std::find(shared_keys.begin(), shared_keys.end(), key) != shared_keys.end();
    if (only_shared && !shared) continue;  // another command's key
    // "file:line" of the key, so a bad value in a long config is found at once.
    std::string where =
        node.source().begin.line ? fmt::format("{}:{}", cfg.path(), node.source().begin.line) : cfg.path();
    CLI::Option* opt = nullptr;
    for (const auto& [param, o] : binder.bindings()) {
      if (param == key) opt = o;
    }
    if (!opt) {
      if (shared) continue;  // read by the subcommands, not by this binder
      bool is_sub = std::find(subcommand_names.begin(), subcommand_names.end(), key) != subcommand_names.end();
      if (!(is_sub && node.is_table()))
        warn(fmt::format("config {}: unknown key '{}' in [{}] (ignored)", cfg.path(), key, table_name));
      continue;
    }
    if (opt->count() > 0) continue;  // the command line wins, and its list replaces the config's
    std::vector<std::string> args;
    if (const toml::array* arr = node.as_array()) {
      for (const auto& e : *arr) {
        auto s = toml_scalar_to_arg(e);
        if (!s)
          throw ConfigError(fmt::format("{}: [{}] {}: list items must be strings or numbers", where, table_name, key));
        args.push_back(*s);
      }
    } else {
      auto s = toml_scalar_to_arg(node);
      if (!s)
        throw ConfigError(fmt::format("{}: [{}] {}: expected a string, number or boolean", where, table_name, key));
      args.push_back(*s);
    }
    if (args.empty()) continue;
    try {
      opt->add_result(args);
      opt->run_callback();
    } catch (const CLI::Error& e) {
      throw ConfigError(fmt::format("{}: [{}] {} = {}: {}", where, table_name, key, fmt::join(args, ", "), e.what()));
    }
  }
}

}  // namespace gcm
