// `gcm prolog`, `gcm epilog`, `gcm healthcheck`: the suite runners' command lines (src/suite/runner.h does the
// work). Slurm runs Prolog=, Epilog= and HealthCheckProgram= without arguments, so the same commands are also
// reached through the program names gcm-prolog, gcm-epilog and gcm-healthcheck (symlinks to gcm), with the suite
// from $GCM_SUITE or /etc/gcm/suite.toml.
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "suite/suite_command.h"
#include "cli/command_registry.h"
#include "cli/command_startup.h"
#include "suite/runner.h"

namespace gcm {

namespace {

// The line of `gcm --help`.
const char* profile_summary(suite::Profile p) {
  switch (p) {
    case suite::Profile::Prolog:
      return "Run the suite's [prolog] checks (Slurm Prolog=)";
    case suite::Profile::Epilog:
      return "Run the suite's [epilog] checks (Slurm Epilog=)";
    case suite::Profile::HealthCheck:
      return "Run the suite's [healthcheck] checks (Slurm HealthCheckProgram=)";
    case suite::Profile::Agent:
      return "The [agent] profile, run by `gcm agent`";
    case suite::Profile::Confirm:
      return "The [confirm] profile, run by `gcm agent --drain`";
  }
  return "";
}

const char* profile_help(suite::Profile p) {
  switch (p) {
    case suite::Profile::Prolog:
      return "Run the suite's [prolog] checks (Slurm Prolog=): exit 0 when the node may run the job, 1 when it must "
             "not (Slurm then drains the node and requeues the job); writes the GPU -> job mapping files.";
    case suite::Profile::Epilog:
      return "Run the suite's [epilog] checks (Slurm Epilog=): exit 1 drains the node; removes the job's GPU "
             "mapping files first.";
    case suite::Profile::HealthCheck:
      return "Run the suite's [healthcheck] checks (Slurm HealthCheckProgram=): drains the node with "
             "Reason=\"gcm: <check>: <message>\" on a failure, resumes a node gcm drained once its checks pass, "
             "never touches a node drained for another reason.";
    case suite::Profile::Agent:
      return "The [agent] profile is run by `gcm agent`, not on its own.";
    case suite::Profile::Confirm:
      return "The [confirm] profile is run by `gcm agent --drain` on an idle node that gcm's detector drained.";
  }
  return "";
}

}  // namespace

int suite_main(suite::Profile profile, std::vector<std::string> args) {
  const char* name = suite::to_string(profile);
  CLI::App app{profile_help(profile)};
  app.name(fmt::format("gcm {}", name));
  app.footer(
      "Suite file: [suite], [slurm], [environment], [prolog]/[epilog]/[healthcheck] with budget, timeout, drain and "
      "[[<profile>.checks]] entries (name, check or command, args, options, timeout, severity, fail_on). See the "
      "README, section 'Prolog, epilog and health-check suites'.\nVerdict lines: '<OK|WARNING|CRITICAL|UNKNOWN|"
      "TIMEOUT> - <check> [<seconds> s]. <message>', then 'gcm <profile> <node>: PASS|FAIL - ...'.\nHow checks run: "
      "all at once; the built-in ones on threads of one child process, each external command in a process of its "
      "own; a check past its timeout is killed with its tools, and a built-in check interrupted with it runs again "
      "alone.\nExit codes: 0 "
      "the node may run jobs, 1 it must not, 2 a bad command line or suite file.");
  suite::RunnerOptions opts;
  opts.profile = profile;
  opts.suite_path = suite::default_suite_path();
  std::optional<std::string> node;
  bool drain = false, no_drain = false;
  app.add_option("--suite", opts.suite_path, "The suite file (default: $GCM_SUITE, else /etc/gcm/suite.toml).")
      ->capture_default_str();
  app.add_option("--node", node, "This node's Slurm name (default: $SLURMD_NODENAME, else the short host name).");
  app.add_flag("--drain", drain, "Drain (and, for healthcheck, resume) through scontrol whatever the suite says.");
  app.add_flag("--no-drain", no_drain, "Never call scontrol; only the exit code speaks.");
  app.add_flag("--stdout", opts.log_stdout,
               "Internal logs to stdout instead of <log_folder>/<profile>_logs/<node>.log.");
  app.add_flag("--validate", opts.validate_only,
               "Load the suite, resolve every check of this profile with its options, print the plan and exit (0 "
               "valid, 2 not); runs nothing.");
  std::vector<std::string> rev(args.rbegin(), args.rend());  // CLI11 takes the words last first
  if (auto rc = parse_command_line(
          app, [&] { app.parse(rev); }, fmt::format("Try 'gcm {} --help'.", name)))
    return *rc;
  if (drain && no_drain) {
    std::cerr << "Error: --drain and --no-drain exclude each other\n";
    return suite::kExitUsage;
  }
  if (drain) opts.drain = true;
  if (no_drain) opts.drain = false;
  opts.node = node;
  return suite::run_profile(opts);
}

std::optional<suite::Profile> suite_profile_of_program(std::string_view program) {
  if (program == "gcm-prolog") return suite::Profile::Prolog;
  if (program == "gcm-epilog") return suite::Profile::Epilog;
  if (program == "gcm-healthcheck") return suite::Profile::HealthCheck;
  return std::nullopt;
}

namespace {

// slurmd reads a prolog's exit status to decide whether the job may start: a detached suite would always say 0.
bool register_suite_command(suite::Profile p) {
  return register_app_command(
      {suite::to_string(p), profile_summary(p), profile_help(p), nullptr, [p](std::vector<std::string> words, bool detach) {
         if (detach)
           return usage_error(
               fmt::format("-d/--detach does not apply to '{}': Slurm reads its exit status", suite::to_string(p)));
         return suite_main(p, std::move(words));
       }});
}

const bool kSuiteCommandRegistered = register_suite_command(suite::Profile::Prolog) &&
                                     register_suite_command(suite::Profile::Epilog) &&
                                     register_suite_command(suite::Profile::HealthCheck);

}  // namespace

}  // namespace gcm
