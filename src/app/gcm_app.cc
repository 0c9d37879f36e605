// `gcm`: the root command line. Every subcommand registers itself (cli/command_registry.h); this file builds the
// chosen one, parses, loads the config file and hands over.
#include <unistd.h>

#include <iostream>

#include <fmt/format.h>

#include "app/commands.h"
#include "cli/command_registry.h"
#include "cli/command_startup.h"
#include "cli/option_binder.h"
#include "collectors/slurm_backend.h"
#include "core/config.h"
#include "gpu/gpu_backend_choice.h"

namespace gcm {

namespace {

const char* const kGcmDescription =
    "GCM: GPU cluster monitoring. Collectors turn Slurm's and the hosts' state into records for a sink.";

// The command named on the command line (its first word that is not an option or the value of --config or
// --backend). Only that command's options are built: building every collector's options was most of the start-up
// of `gcm prolog`, which runs before every job. No name, or one that is not a command, builds them all, for --help and
// the error message.
std::string_view named_command(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--config" || a == "--backend") {
      ++i;  // its value
      continue;
    }
    if (a == "--help" || a == "-h") return "--help";  // before any command: the root's help
    if (!a.empty() && a[0] == '-') continue;
    return a;
  }
  return {};
}

// The options gcm itself takes, before the command's name.
struct GcmRootOptions {
  std::optional<std::string> config_path;
  bool detach = false;
  std::optional<std::string> backend;
};

void add_gcm_root_options(CLI::App& app, OptionBinder& root, GcmRootOptions& o) {
  app.name("gcm");
  app.option_defaults()->always_capture_default(false);
  app.footer(fmt::format("GCM Version: {}", GCM_VERSION));
  app.add_option("--config", o.config_path,
                 "TOML config file: [gcm.<subcommand>] tables keyed by parameter name (default: "
                 "/etc/gcm/config.toml, else /etc/fb-gcm/config.toml)");
  root.flag("-d,--detach", "detach", o.detach,
            "Run in the background, detached from the terminal (collectors, slurm_processor; not the prolog, epilog "
            "or healthcheck suites, whose exit status Slurm reads).");
  root.option("--backend", "backend", o.backend,
              "GPU library of the GPU commands (nvml_monitor, rocm_monitor, agent): nvml (NVIDIA), amdsmi (AMD, "
              "libamd_smi.so) or auto (the first that finds GPUs, NVML first). Default: nvml for nvml_monitor and the "
              "agent, amdsmi for rocm_monitor.")
      ->check(CLI::IsMember(gpu_backend_names()));
  app.set_version_flag("--version", fmt::format("gcm, version {}", GCM_VERSION));
}

void visit_gcm_subcommands(const std::vector<std::string>& path, const CLI::App& app,
                       const std::function<void(const std::vector<std::string>&, const CLI::App&)>& fn) {
  fn(path, app);
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    std::vector<std::string> sub_path = path;
    sub_path.push_back(sub->get_name());
    visit_gcm_subcommands(sub_path, *sub, fn);
  }
}

struct Chosen {
  CLI::App* app = nullptr;
  CommandRunner runner;   // a command with options
  WordsRunner run_words;  // or one with a parser of its own
};

}  // namespace

int gcm_main(int argc, char** argv) {
  CLI::App app{kGcmDescription};
  GcmRootOptions root_options;
  OptionBinder root(app);
  add_gcm_root_options(app, root, root_options);
  std::optional<std::string>& config_path = root_options.config_path;
  bool& detach_flag = root_options.detach;

  std::string named(named_command(argc, argv));
  // `gcm --help <command>` is the root's help, as click's eager --help gives it, with every command in it (CLI11
  // would print the named command's help, which for a command with a parser of its own is an empty stub).
  const bool root_help = named == "--help";
  if (root_help) named.clear();
  bool build_all = !app_command_registry().count(named);
  std::vector<Chosen> built;
  std::vector<std::string> sub_names;  // every command: the config file's [gcm.<name>] tables are not root options
  for (const auto& [name, spec] : app_command_registry()) {
    sub_names.push_back(name);
    if (!build_all && name != named) continue;
    // No command named (--help, --version, no words) or an unknown one: nothing will run, and the root's help lists
    // each command by name and its one-line summary only, so their options are not built (most of `gcm --help`'s
    // time). The named command's own help starts with its whole paragraph.
    CLI::App* sub = app.add_subcommand(name, build_all ? spec.summary : spec.help);
    if (build_all) continue;
    if (spec.run_words) {
      sub->prefix_command();
      sub->allow_extras();
      sub->set_help_flag();  // --help goes to the command's own parser, which knows its options
      built.push_back({sub, nullptr, spec.run_words});
    } else {
      built.push_back({sub, spec.setup(*sub), nullptr});
    }
  }
  one_value_per_occurrence(app);

  if (argc <= 1 || root_help) {
    std::cout << app.help();
    return 0;
  }
  // CLI11 handles --help before it reports extra words, so "gcm nosuch --help" would print the root help and exit 0.
  if (!named.empty() && build_all) {
    std::cerr << "Error: unknown command '" << named << "'\nTry 'gcm --help' (or 'gcm <command> --help') for help.\n";
    return 2;
  }
  if (auto rc = parse_command_line(
          app, [&] { app.parse(argc, argv); }, "Try 'gcm --help' (or 'gcm <command> --help') for help."))
    return *rc;

  const Chosen* chosen = nullptr;
  for (const Chosen& c : built)
    if (c.app->parsed()) chosen = &c;
  if (!chosen) {
    std::cout << app.help();
    return 0;
  }
  if (chosen->run_words) return chosen->run_words(chosen->app->remaining(), detach_flag);

  try {
    ConfigFile cfg = ConfigFile::load(config_path, "gcm", kGcmConfigPaths);
    Invocation inv{cfg};
    if (config_path && *config_path != "/dev/null" && ::access(config_path->c_str(), F_OK) != 0)
      inv.warnings.push_back(fmt::format("config file '{}' does not exist; using defaults", *config_path));
    // [gcm] also holds the keys every Slurm collector takes from it (slurm_backend, ...): not unknown here.
    apply_config(
        cfg, {}, root, sub_names, [&](const std::string& w) { inv.warnings.push_back(w); },
        slurm_backend_config_keys());
    inv.detach = detach_flag;
    inv.gpu_backend = root_options.backend;
    return chosen->runner(inv);
  } catch (const ConfigError& e) {
    return usage_error(e.what());
  }
}

void visit_gcm_command_lines(const std::function<void(const std::vector<std::string>& path, const CLI::App& app)>& fn) {
  CLI::App app{kGcmDescription};
  GcmRootOptions root_options;
  OptionBinder root(app);
  add_gcm_root_options(app, root, root_options);
  std::vector<CommandRunner> runners;  // they own the variables the options write to
  for (const auto& [name, spec] : app_command_registry()) {
    CLI::App* sub = app.add_subcommand(name, spec.help);
    if (spec.setup) runners.push_back(spec.setup(*sub));
  }
  one_value_per_occurrence(app);
  visit_gcm_subcommands({}, app, fn);
}

}  // namespace gcm
