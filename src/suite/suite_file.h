// The suite file (TOML) of `gcm prolog`, `gcm epilog` and `gcm healthcheck`: per profile, the checks to run with
// their options, timeout and severity, and the profile's time budget; plus where Slurm's tools are when the
// environment does not say (Slurm runs HealthCheckProgram with no PATH and no SLURM_CONF).
//
//   [suite]        cluster, log_folder, log_level, sink, sink_opts, state_dir, gpu_job_mapping_dir, features_config
//   [slurm]        scontrol, conf, timeout, reason_max_length
//   [environment]  variables set before the checks run ("{node}" is replaced by the node name)
//   [prolog] / [epilog] / [healthcheck]   budget, timeout (default per check), drain, parallel
//   [[prolog.checks]]  name, check = "check-nvidia-smi" | command = [...], args = [...], options = {...},
//                      timeout, severity = "drain"|"warn"|"ignore", fail_on = "critical"|"warning",
//                      exit_codes = "nagios"|"zero-ok" (commands only)
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <toml++/toml.h>

namespace gcm::suite {

struct SuiteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Agent: the checks `gcm agent` runs in-process every --check-interval (never drains: the agent reports, the
// prolog's agent-verdict acts).
// Agent: run by `gcm agent` every --check-interval. Confirm: run by the agent on an idle node that gcm's detector
// drained; the node is resumed only when every check passes (e.g. `dcgmi diag -r 2`, which needs idle GPUs).
enum class Profile { Prolog, Epilog, HealthCheck, Agent, Confirm };
const char* to_string(Profile p);  // "prolog", "epilog", "healthcheck", "agent", "confirm"

// What a check's result means for the node.
enum class Severity {
  Drain,   // a failure means the node must not run jobs (prolog/epilog exit non-zero, drain)
  Warn,    // a failure is reported, never drains
  Ignore,  // the check runs for its telemetry only
};

struct CheckEntry {
  std::string name;                    // verdict lines, telemetry health_check, drain reasons
  std::vector<std::string> check;      // built-in: command path {"check-storage", "disk-usage"}; empty for a command
  std::vector<std::string> command;    // external tool: argv (absolute path or found through [environment] PATH)
  std::vector<std::string> args;       // built-in: command-line arguments after CLUSTER TYPE
  std::optional<toml::table> options;  // built-in: option values keyed by parameter name (args win)
  double timeout_s = 0;
  Severity severity = Severity::Drain;
  bool fail_on_warning = false;   // fail_on = "warning": WARNING fails too (CRITICAL and timeouts always do)
  bool nagios_exit_codes = true;  // commands: exit 0/1/2/3 are Nagios'; "zero-ok": any non-zero is CRITICAL
  std::string where;              // "suite.toml: [[prolog.checks]] #2 (line 14)" for messages
};

struct ProfileSpec {
  double budget_s = 30;           // the whole profile, all checks together
  double default_timeout_s = 10;  // a check's timeout when it names none (the budget ends any check anyway)
  bool drain = false;             // call scontrol to drain/resume (healthcheck: default true)
  std::vector<CheckEntry> checks;
};

struct SuiteFile {
  std::string path;
  std::optional<std::string> cluster;
  std::string log_folder = "/var/log/gcm";
  std::string log_level = "INFO";
  std::string sink = "do_nothing";
  std::vector<std::string> sink_opts;
  std::string state_dir = "/run/gcm";
  std::string gpu_job_mapping_dir;  // empty: the prolog writes no mapping files; "{node}" becomes the node name
  std::optional<std::string> features_config;
  std::optional<std::string> scontrol;
  std::optional<std::string> slurm_conf;
  double slurm_timeout_s = 10;
  size_t reason_max_length = 255;
  std::vector<std::pair<std::string, std::string>> environment;  // in file order
  std::map<Profile, ProfileSpec> profiles;
};

// Parses and validates the file (names, types, ranges). Check names are not resolved here (see runner.h).
// Throws SuiteError naming the file, the table or entry, the line and what was expected.
SuiteFile load_suite(const std::string& path);
SuiteFile parse_suite(const std::string& text, const std::string& source_name);

// Where the suite is when --suite is not given: $GCM_SUITE, else /etc/gcm/suite.toml.
std::string default_suite_path();

}  // namespace gcm::suite
