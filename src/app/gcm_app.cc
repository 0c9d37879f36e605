// `gcm`: the collectors, each a subcommand with the shared options, its own options and a [gcm.<name>] config table.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "cli/command_registry.h"
#include "cli/detach.h"
#include "app/commands.h"
#include "cli/option_binder.h"
#include "app/slurm_processor_cmd.h"
#include "collectors/collector.h"
#include "collectors/loop.h"
#include "collectors/shared_options.h"
#include "core/config.h"
#include "core/logging.h"
#include "gpu/nvml_library.h"
#include "health/check.h"
#include "slurm/cluster_name.h"

namespace gcm {

namespace {

const std::vector<std::string> kDefaultConfigPaths = {"/etc/gcm/config.toml", "/etc/fb-gcm/config.toml"};

struct CollectorCommand {
  const CollectorSpec* spec;
  CLI::App* app;
  std::unique_ptr<OptionBinder> binder;
  SharedOptions shared;
  std::unique_ptr<Collector> collector;
};

// The command named on the command line (its first word that is not an option or --config's value). Only that
// command's options are built: building every collector's options was most of the start-up of `gcm prolog`, which
// runs before every job. No name, or one that is not a command, builds them all, for --help and the error message.
std::string_view named_command(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--config") {
      ++i;  // its value
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    return a;
  }
  return {};
}

bool is_command(std::string_view name) {
  if (collector_registry().count(std::string(name)) || app_command_registry().count(std::string(name))) return true;
  for (const char* n : {"slurm_processor", "schemas", "health_checks", "prolog", "epilog", "healthcheck"})
    if (name == n) return true;
  return false;
}

int usage_error(const std::string& msg) {
  std::cerr << "Error: " << msg << "\n";
  return 2;
}

}  // namespace

int gcm_main(int argc, char** argv) {
  CLI::App app{"GCM: GPU cluster monitoring. Collectors turn Slurm's and the hosts' state into records for a sink."};
  app.name("gcm");
  app.option_defaults()->always_capture_default(false);
  app.footer(fmt::format("GCM Version: {}", GCM_VERSION));
  std::optional<std::string> config_path;
  bool detach_flag = false;
  OptionBinder root(app);
  app.add_option("--config", config_path,
                 "TOML config file: [gcm.<subcommand>] tables keyed by parameter name (default: "
                 "/etc/gcm/config.toml, else /etc/fb-gcm/config.toml)");
  root.flag("-d,--detach", "detach", detach_flag,
            "Run in the background, detached from the terminal (collectors, slurm_processor; not the prolog, epilog "
            "or healthcheck suites, whose exit status Slurm reads).");
  app.set_version_flag("--version", fmt::format("gcm, version {}", GCM_VERSION));

  std::string_view named = named_command(argc, argv);
  bool build_all = !is_command(named);
  auto wanted = [&](std::string_view name) { return build_all || name == named; };

  std::map<std::string, std::unique_ptr<CollectorCommand>> commands;  // stable addresses: CLI11 binds to members
  std::vector<std::string> sub_names;  // every command: the config file's [gcm.<name>] tables are not root options
  for (const auto& [name, spec] : collector_registry()) {
    sub_names.push_back(name);
    if (!wanted(name)) continue;
    auto c = std::make_unique<CollectorCommand>();
    c->spec = &spec;
    c->app = app.add_subcommand(name, spec.help);
    c->app->footer(sinks_help());
    c->binder = std::make_unique<OptionBinder>(*c->app);
    c->shared.add_to(*c->binder, spec.default_interval);
    if (spec.log_file_per_host)
      c->app->get_option("--log-folder")
          ->description(fmt::format("Internal logs go to <log-folder>/{}_logs/<hostname>.log (rotated at 1 MiB, 2 "
                                    "backups).",
                                    spec.logger_name));
    c->collector = spec.setup(*c->binder);
    commands.emplace(name, std::move(c));
  }
  std::vector<std::pair<CLI::App*, CommandRunner>> app_commands;  // sacct_publish, fsacct, sacct_backfill, ...
  for (const auto& [name, spec] : app_command_registry()) {
    sub_names.push_back(name);
    if (!wanted(name)) continue;
    CLI::App* sub = app.add_subcommand(name, spec.help);
    app_commands.emplace_back(sub, spec.setup(*sub));
  }
  CLI::App* schemas_cmd = app.add_subcommand("schemas", "Print every record schema (fields, types, roles, units, "
                                                        "Prometheus names) as Markdown.");
  CLI::App* hc_cmd = app.add_subcommand("health_checks", "The health checks (same as the `health_checks` command).");
  hc_cmd->prefix_command();
  hc_cmd->set_help_flag();  // --help goes to health_checks_main, which knows the groups and checks
  auto processor_cmd = wanted("slurm_processor") ? add_slurm_processor_command(app) : nullptr;
  sub_names.push_back("slurm_processor");
  std::vector<std::pair<CLI::App*, suite::Profile>> suite_cmds;
  for (auto p : {suite::Profile::Prolog, suite::Profile::Epilog, suite::Profile::HealthCheck}) {
    CLI::App* c = app.add_subcommand(suite::to_string(p), suite_command_help(p));
    c->prefix_command();
    c->set_help_flag();  // --help goes to the runner's own parser, which knows the options
    suite_cmds.emplace_back(c, p);
  }
  one_value_per_occurrence(app);

  if (argc <= 1) {
    std::cout << app.help();
    return 0;
  }
  // CLI11 handles --help before it reports extra words, so "gcm sprio --help" would print the root help and exit 0.
  if (!named.empty() && build_all) {
    std::cerr << "Error: unknown command '" << named << "'\nTry 'gcm --help' (or 'gcm <command> --help') for help.\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "Error: " << e.what() << "\nTry 'gcm --help' (or 'gcm <command> --help') for help.\n";
    return 2;
  }

  if (hc_cmd->parsed()) {
    std::vector<std::string> rest = hc_cmd->remaining();
    std::vector<char*> hc_argv = {const_cast<char*>("health_checks")};
    static char detach_word[] = "--detach";
    if (detach_flag) hc_argv.push_back(detach_word);  // GCM's -d applies to the whole invocation
    for (auto& s : rest) hc_argv.push_back(s.data());
    return health_checks_main(static_cast<int>(hc_argv.size()), hc_argv.data());
  }
  if (processor_cmd && slurm_processor_parsed(*processor_cmd))
    return run_slurm_processor(*processor_cmd, config_path, kDefaultConfigPaths, detach_flag);
  for (auto& [c, p] : suite_cmds) {
    if (!c->parsed()) continue;
    // slurmd reads a prolog's exit status to decide whether the job may start: a detached suite would always say 0.
    if (detach_flag) return usage_error(fmt::format("-d/--detach does not apply to '{}': Slurm reads its exit status",
                                                    c->get_name()));
    return suite_main(p, c->remaining());
  }
  if (schemas_cmd->parsed()) {
    for (const Schema* s : schema_registry()) std::cout << schema_markdown(*s) << "\n";
    return 0;
  }

  for (auto& [sub, runner] : app_commands) {
    if (!sub->parsed()) continue;
    try {
      ConfigFile cfg = ConfigFile::load(config_path, "gcm", kDefaultConfigPaths);
      if (detach_flag) detach();
      return runner(cfg);
    } catch (const ConfigError& e) {
      return usage_error(e.what());
    }
  }

  CollectorCommand* cmd = nullptr;
  for (auto& [name, c] : commands) {
    if (c->app->parsed()) cmd = c.get();
  }
  if (!cmd) {
    std::cout << app.help();
    return 0;
  }

  std::vector<std::string> warnings;
  try {
    ConfigFile cfg = ConfigFile::load(config_path, "gcm", kDefaultConfigPaths);
    if (config_path && *config_path != "/dev/null" && ::access(config_path->c_str(), F_OK) != 0)
      warnings.push_back(fmt::format("config file '{}' does not exist; using defaults", *config_path));
    auto warn = [&](const std::string& w) { warnings.push_back(w); };
    apply_config(cfg, {}, root, sub_names, warn);
    apply_config(cfg, {cmd->spec->name}, *cmd->binder, {}, warn);
  } catch (const ConfigError& e) {
    return usage_error(e.what());
  }

  std::shared_ptr<spdlog::logger> log;
  try {
    log = setup_logging({cmd->spec->logger_name, cmd->spec->log_file_per_host ? health::node_hostname() : "",
                         cmd->shared.log_folder, cmd->shared.log_level, cmd->shared.log_stdout});
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  }
  for (const auto& w : warnings) {
    std::cerr << "Warning: " << w << "\n";
    log->warn("{}", w);
  }

  try {
    if (detach_flag) detach();
    CollectorContext ctx;
    if (cmd->shared.cluster) {
      ctx.cluster = *cmd->shared.cluster;
    } else {
      ClusterNameLookup lookup = look_up_cluster_name();
      ctx.cluster = lookup.name.value_or("local-node");
      if (!lookup.problem.empty()) {
        std::string warning = cluster_name_warning(lookup);
        if (!cmd->shared.once) warning += "; asked again before each round";
        log->warn("{}", warning);
        std::cerr << "Warning: " << warning << "\n";
        ctx.retry_cluster = [] { return look_up_cluster_name().name; };
      }
    }
    ctx.heterogeneous_cluster_v1 = cmd->shared.heterogeneous_cluster_v1;
    ctx.interval = cmd->shared.interval;
    ctx.log = log;
    return run_collection_loop(cmd->spec->name, cmd->shared, *cmd->collector, ctx);
  } catch (const UsageError& e) {
    log->warn("exiting on a usage error: {}", e.what());  // stderr gets the message once, below
    return usage_error(e.what());
  } catch (const SinkUsageError& e) {
    log->warn("exiting on a usage error: {}", e.what());
    return usage_error(e.what());
  } catch (const NvmlUnavailable& e) {
    log->warn("{}: NVML is unavailable: {}", cmd->spec->name, e.what());
    std::cerr << "Error: NVML is unavailable: " << e.what() << "\n";
    return kExitNvmlUnavailable;
  } catch (const std::exception& e) {
    log->critical("{}: {}", cmd->spec->name, e.what());
    return 1;
  }
}

}  // namespace gcm
