// `health_checks` (and `gcm health_checks`): the health-check command tree. Every check registered in
// src/health/checks/ becomes `health_checks <group> <check> CLUSTER TYPE [options]` (or `<check> CLUSTER TYPE`)
// with the reference's common options, a [health_checks.<group>.<check>] config table (parent tables fill what the
// check's own table does not) and the killswitch file of --features-config.
#include <iostream>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "health/health_checks_command.h"
#include "cli/command_registry.h"
#include "cli/command_startup.h"
#include "cli/detach.h"
#include "cli/option_binder.h"
#include "cli/option_limits.h"
#include "core/config.h"
#include "core/logging.h"
#include "health/check.h"

namespace gcm {

namespace {

using health::CheckRun;
using health::HealthCheckSpec;

const std::vector<std::string> kDefaultConfigPaths = {"/etc/fb-healthchecks/config.toml"};

struct CheckCommand {
  const HealthCheckSpec* spec = nullptr;
  CLI::App* app = nullptr;
  std::unique_ptr<OptionBinder> binder;
  std::optional<std::string> cluster, type;
  std::string log_level = "INFO";
  std::string log_folder = "healthchecks";
  std::string sink = "do_nothing";
  std::vector<std::string> sink_opts;
  bool verbose_out = false;
  bool heterogeneous = false;
  bool log_stdout = false;
  int64_t timeout = 300;
  std::unique_ptr<health::HealthCheck> check;
};

// Added after the check's own options. GCM declares a check's own options after the common ones, and click gives a
// short name declared twice to the option declared last: check-path-access-by-user's `-o/--operation` takes -o from
// the telemetry `-o/--sink-opt`, so GCM's `... -p /data -o read` checks read access. Here --sink-opt keeps only its
// long name where the check took -o (CLI11 refuses the second -o before it adds anything). A try rather than a
// look-up first: the look-up would put CLI11's name matching on every check's start-up path.
void add_common_options(CheckCommand& c) {
  OptionBinder& b = *c.binder;
  b.option("cluster", "cluster", c.cluster, "Cluster name (telemetry cluster and derived_cluster).");
  b.option("type", "type", c.type,
           "How the check runs: prolog, epilog (job id from SLURM_JOB_ID, GPUs from SLURM_JOB_GPUS), nagios or "
           "app (stdout line with the message).")
      ->check(CLI::IsMember({"prolog", "epilog", "nagios", "app"}));
  b.option("--log-level", "log_level", c.log_level, "DEBUG, INFO, WARNING, ERROR or CRITICAL.")->capture_default_str();
  b.option("--log-folder", "log_folder", c.log_folder,
           "Logs go to <log-folder>/<type>_logs/<hostname>.log (rotated at 1 MiB, 2 backups).")
      ->capture_default_str();
  b.flag("--stdout", "stdout", c.log_stdout, "Write internal logs to stdout instead of the log file.");
  b.option("--sink", "sink", c.sink, fmt::format("Where the telemetry record goes: {}.", sink_names()))
      ->capture_default_str();
  try {
    b.option("-o,--sink-opt", "sink_opts", c.sink_opts, "Sink option key=value; repeat for several.");
  } catch (const CLI::OptionAlreadyAdded&) {
    const CLI::Option* owner = c.app->get_option_no_throw("-o");
    b.option("--sink-opt", "sink_opts", c.sink_opts,
             fmt::format("Sink option key=value; repeat for several. -o is this check's {}, as in GCM: give sink "
                         "options as --sink-opt.",
                         owner ? owner->get_name() : "own option"));
  }
  b.flag("--verbose-out", "verbose_out", c.verbose_out, "Always print the result line, with its message.");
  b.flag("--heterogeneous-cluster-v1", "heterogeneous_cluster_v1", c.heterogeneous,
         "derived_cluster = CLUSTER.<hostname up to its first '-'>.");
  if (c.spec->has_timeout)
    b.option("--timeout", "timeout", c.timeout,
             "Seconds each external command may run; also the check's deadline for reading host files (a kernel "
             "log or syslog that is a FIFO or a device without end).")
        ->capture_default_str()
        ->check(CLI::PositiveNumber)
        ->check(timeout_seconds());
}

// The one check the command line names ("check-syslogs xid ..." or "check-nccl ..."), so that only its options are
// built: building every check's options costs more than running most checks. nullptr when the line names none
// (--help, --version, a group's help or a typo): then every group and check is built without its options, which
// is all that the root's and the groups' help and CLI11's errors show.
const HealthCheckSpec* named_check(int argc, char** argv) {
  std::vector<std::string_view> words;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--config" || a == "--features-config") {
      ++i;  // skip the value
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    words.push_back(a);
    if (words.size() == 2) break;
  }
  if (words.empty()) return nullptr;
  for (const auto& spec : health::health_check_registry()) {
    if (spec.path.size() == 1 && spec.path[0] == words[0]) return &spec;
    if (spec.path.size() == 2 && words.size() == 2 && spec.path[0] == words[0] && spec.path[1] == words[1])
      return &spec;
  }
  return nullptr;
}

// The killswitch file into `run`. A file that is not valid TOML leaves every check enabled (GCM's documented
// fallback), so that must not go unseen: a warning on stderr and in every telemetry record of the run, not only in
// the log file.
void load_killswitches(const std::string& path, CheckRun& run) {
  std::vector<std::string> warnings;
  run.killswitches = health::Killswitches::load(path, &warnings);
  for (const auto& w : warnings) run.log->warn("{}", w);
  if (auto failure = run.killswitches.load_failure()) {
    std::cerr << "Warning: " << *failure << "\n";
    run.telemetry_warnings.push_back(*failure);
  }
}

// The command tree: the root options, the groups and the checks (only the one the line names, when it names one).
struct HealthChecksCli {
  CLI::App app{
      "GCM health checks: run as Slurm prolog/epilog, Nagios check or from an application. Exit codes: "
      "0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN. Usage: health_checks [-d] <group> <check> CLUSTER TYPE "
      "[options]."};
  std::optional<std::string> config_path, features_path;
  bool detach = false;
  std::map<std::string, CLI::App*> group_apps;
  std::vector<std::unique_ptr<CheckCommand>> commands;  // stable addresses: CLI11 binds to members

  explicit HealthChecksCli(const HealthCheckSpec* only) {
    app.name("health_checks");
    app.option_defaults()->always_capture_default(false);
    app.footer(fmt::format("health_checks version: {}", GCM_VERSION));
    app.require_subcommand(0, 1);
    app.add_option("--config", config_path,
                   "TOML config: [health_checks.<group>.<check>] tables keyed by option name (default: "
                   "/etc/fb-healthchecks/config.toml when it exists).");
    app.add_option("--features-config", features_path,
                   "Killswitch TOML: [HealthChecksFeatures] disable_<check> = true makes that check exit OK.");
    app.add_flag("-d,--detach", detach,
                 "Run the check in the background, detached from the terminal (GCM's daemon mode): the command "
                 "exits 0 at once, prints nothing, and the result goes to the log and the telemetry sink only.");
    app.set_version_flag("--version", fmt::format("health_checks, version {}", GCM_VERSION));
    for (const auto& [name, help] : health::health_group_registry())
      if (!only || (only->path.size() == 2 && only->path[0] == name)) group_apps[name] = app.add_subcommand(name, help);
    for (const auto& spec : health::health_check_registry()) {
      if (only && &spec != only) continue;
      auto c = std::make_unique<CheckCommand>();
      c->spec = &spec;
      CLI::App* parent = &app;
      if (spec.path.size() == 2) {
        auto it = group_apps.find(spec.path[0]);
        parent = it != group_apps.end() ? it->second : (group_apps[spec.path[0]] = app.add_subcommand(spec.path[0]));
      }
      c->app = parent->add_subcommand(spec.path.back(), spec.help);
      c->binder = std::make_unique<OptionBinder>(*c->app);
      if (only) {
        c->check = spec.setup(*c->binder);  // first: a short name both declare is the check's (add_common_options)
        add_common_options(*c);
      }
      commands.push_back(std::move(c));
    }
    for (auto& [name, g] : group_apps) g->require_subcommand(1);
    one_value_per_occurrence(app);
  }

  // Parses the words after the program name (throws CLI::ParseError and the help/version calls). CLI11 takes the
  // words in reverse order.
  void parse(const std::vector<std::string>& words) {
    std::vector<std::string> args;
    for (auto it = words.rbegin(); it != words.rend(); ++it) args.push_back(health_checks_cli_word(*it));
    app.parse(args);
  }

  CheckCommand* parsed_check() const {
    for (const auto& c : commands)
      if (c->app->parsed()) {
        // CLI11 reaches a check only through the words named_check() reads, so a tree built without options
        // never parses one; if that ever changed, running a check whose options were not bound would be wrong.
        if (!c->check) throw std::logic_error("health_checks: a check was parsed from a tree built without options");
        return c.get();
      }
    return nullptr;
  }
};

}  // namespace

std::string health_checks_cli_word(const std::string& word) {
  // The reference spells cuda memtest's option "-gpu" (one dash, three letters), which CLI11 would read as -g -p -u.
  return word == "-gpu" ? "--gpu-devices" : word;
}

void visit_health_checks_command_lines(
    const std::function<void(const std::vector<std::string>& path, const CLI::App& app)>& fn) {
  fn({}, HealthChecksCli(nullptr).app);
  for (const auto& spec : health::health_check_registry()) {
    HealthChecksCli cli(&spec);
    for (const auto& c : cli.commands)
      if (c->spec == &spec) fn(spec.path, *c->app);
  }
}

ParsedCheckLine parse_health_checks_line(const std::vector<std::string>& words) {
  std::vector<char*> argv = {const_cast<char*>("health_checks")};
  for (const auto& w : words) argv.push_back(const_cast<char*>(w.c_str()));
  HealthChecksCli cli(named_check(static_cast<int>(argv.size()), argv.data()));
  ParsedCheckLine out;
  try {
    cli.parse(words);
  } catch (const CLI::Error& e) {
    out.error = e.what();
    return out;
  }
  out.detach = cli.detach;
  if (cli.config_path) out.values["--config"] = {*cli.config_path};
  if (cli.features_path) out.values["--features-config"] = {*cli.features_path};
  CheckCommand* cmd = cli.parsed_check();
  if (!cmd) return out;
  out.path = cmd->spec->path;
  for (const auto& [param, opt] : cmd->binder->bindings())
    if (opt->count() > 0) out.values[param] = opt->results();
  return out;
}

int health_checks_main(int argc, char** argv) {
  HealthChecksCli cli(named_check(argc, argv));
  CLI::App& app = cli.app;
  if (argc <= 1) {
    std::cout << app.help();
    return 0;
  }
  if (auto rc = parse_command_line(
          app, [&] { cli.parse(std::vector<std::string>(argv + 1, argv + argc)); },
          "Try 'health_checks --help' (or '<group> <check> --help')."))
    return *rc;
  auto& config_path = cli.config_path;
  auto& features_path = cli.features_path;
  CheckCommand* cmd = cli.parsed_check();
  if (!cmd) {
    std::cout << app.help();
    return 0;
  }

  ConfigFile cfg;
  try {
    cfg = ConfigFile::load(config_path, "health_checks", kDefaultConfigPaths);
  } catch (const ConfigError& e) {
    return usage_error(e.what());
  }
  Invocation inv{cfg};
  inv.detach = cli.detach;
  CommandStartup startup{"health_checks", {{cmd->spec->path, cmd->binder.get()}}};
  // The parent tables ([health_checks.<group>], [health_checks]) fill what the check's own table does not; they
  // may hold keys meant for the group's other checks, so their unknown keys are no warning.
  for (size_t n = cmd->spec->path.size(); n-- > 0;)
    startup.tables.push_back(
        {std::vector<std::string>(cmd->spec->path.begin(), cmd->spec->path.begin() + static_cast<long>(n)),
         cmd->binder.get(),
         {},
         /*quiet=*/true});
  CheckRun run;
  SinkContext sctx;
  startup.validate = [&] {
    if (!cmd->cluster) throw UsageError("Missing argument 'CLUSTER'.");
    if (!cmd->type) throw UsageError("Missing argument 'TYPE'.");
    auto type = health::parse_check_type(*cmd->type);
    if (!type)
      throw UsageError(
          fmt::format("Invalid value for 'TYPE': '{}' is not one of prolog, epilog, nagios, app.", *cmd->type));
    run.cluster = *cmd->cluster;
    run.type = *type;
    run.verbose_out = cmd->verbose_out;
    run.heterogeneous_cluster_v1 = cmd->heterogeneous;
    run.timeout_s = cmd->timeout;
  };
  startup.log = [&] {
    return LogSetup{*cmd->type, health::node_hostname(), cmd->log_folder, cmd->log_level, cmd->log_stdout};
  };
  startup.prepare = [&](const std::shared_ptr<spdlog::logger>& log) {
    run.log = log;
    sctx.command = "health_checks";
    sctx.log = run.log;
    sctx.retry.retries = 0;  // a check must not wait minutes for a telemetry backend
    // Built before the detach so that a bad -o is still a usage error on the terminal. A detached run drops it
    // before the fork and builds it again in the child: a sink may hold threads (the prometheus listener's) that
    // fork does not copy.
    run.sink = make_sink(cmd->sink, cmd->sink_opts, sctx);
    if (inv.detach) run.sink.reset();
  };
  return run_command(inv, startup, [&](const std::shared_ptr<spdlog::logger>&) {
    if (!run.sink) run.sink = make_sink(cmd->sink, cmd->sink_opts, sctx);
    try {
      if (features_path) load_killswitches(*features_path, run);
      return cmd->check->run(run);
    } catch (const health::KillswitchFileError& e) {
      throw UsageError(e.what());
    } catch (const health::CheckUsageError& e) {
      throw UsageError(e.what());
    } catch (const std::exception& e) {
      // The reference's OutputContext: an unexpected error is a WARNING line and exit 1.
      run.log->error("{}: {}", fmt::join(cmd->spec->path, " "), e.what());
      std::cout << "WARNING - check did not exit normally" << std::endl;
      std::cerr << "Error: " << e.what() << "\n";
      return 1;
    }
  });
}

namespace {

const bool kHealthChecksCommandRegistered =
    register_app_command({"health_checks", "The health checks (same as the `health_checks` command)",
                          "The health checks (same as the `health_checks` command).", nullptr,
                          [](std::vector<std::string> words, bool detach) {
                            std::vector<std::string> line = {"health_checks"};
                            if (detach) line.push_back("--detach");  // GCM's -d applies to the whole invocation
                            line.insert(line.end(), words.begin(), words.end());
                            std::vector<char*> argv;
                            for (auto& w : line) argv.push_back(w.data());
                            return health_checks_main(static_cast<int>(argv.size()), argv.data());
                          }});

}  // namespace

}  // namespace gcm
