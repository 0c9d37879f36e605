// The health-check plug-in interface: a check registers its command path ({"check-process", "check-zombie"} or
// {"check-telemetry"}), adds its own options, and returns its Verdict (verdict.h) through CheckRun::run_standard,
// the one place that applies the check's killswitch, prints the stdout line, sends the telemetry the reference's
// way and turns the verdict into the exit code.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "cli/cli_fwd.h"
#include "core/clock.h"
#include "health/exit_code.h"
#include "health/health_record.h"
#include "health/killswitches.h"
#include "health/verdict.h"
#include "sinks/sink.h"

namespace gcm::health {

// A failure of the check's own inputs (a required option missing, a bad value): exit 2 with the message.
struct CheckUsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class CheckRun {
 public:
  std::string cluster;
  CheckType type = CheckType::Nagios;
  bool verbose_out = false;
  bool heterogeneous_cluster_v1 = false;
  int64_t timeout_s = 300;
  // When the check began (construction, or run_standard). With timeout_s it gives the check's own deadline.
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  Killswitches killswitches;
  // Problems of the run's own setup that the operator must see in the telemetry too, not only in a log file (a
  // killswitch file that failed to load): each is appended to every record's message as "WARNING: ...".
  std::vector<std::string> telemetry_warnings;
  std::shared_ptr<spdlog::logger> log;
  std::unique_ptr<Sink> sink;              // null: telemetry goes nowhere (do_nothing)
  std::optional<std::string> gpu_node_id;  // known after a check read the GPUs; else from the node-id file
  // Set by the suite runners (gcm prolog/epilog/healthcheck): every result print_output would show goes here
  // instead of stdout, whatever the type, so the runner gets the check's own message.
  std::function<void(const std::string& health_check, const CheckOutcome& o)> on_output;

  // The stdout line: printed for nagios/app or with --verbose-out; the message only for app or --verbose-out.
  std::optional<std::string> output_line(const std::string& health_check, const CheckOutcome& o) const;
  void print_output(const std::string& health_check, const CheckOutcome& o) const;
  // HealthCheckLog's Kubernetes metadata (health/kubernetes_metadata.h): asked once per run, at its first record
  // (a suite's checks share it), and only where a branch's environment turns it on.
  bool kubernetes_asked = false;
  KubernetesMetadataSettings kubernetes_settings;
  KubernetesMetadata kubernetes_metadata;
  void add_kubernetes_metadata(HealthCheckResult& r);
  // One HealthCheckLog record to the sink. job_id: explicit, else $SLURM_JOB_ID for prolog/epilog (a missing one
  // is logged and noted in the message), else 0. A sink failure is logged and never changes the exit code.
  void send_telemetry(const std::string& health_check, const CheckOutcome& o, double start_time,
                      std::optional<int64_t> job_id = std::nullopt, std::optional<std::string> node = std::nullopt);
  // Every check's shape: the killswitch (empty: none), then fn, then the sub-checks' records, the stdout line and
  // the overall record. Returns the exit code.
  int run_standard(const std::string& health_check, const std::string& killswitch, const std::function<Verdict()>& fn);
  static double now() { return unix_seconds_now(); }
  // started + --timeout; nullopt when timeout_s <= 0. Readers of host files that can block or never end (the kernel
  // log on a FIFO, a syslog path that is /dev/zero) stop there with an error. Why a deadline the reader checks
  // rather than a watchdog that stops the check: a thread cannot be cancelled safely, and the suite runs several
  // checks in one process (its shared child), so killing or exiting would take the others with it; the suite's own
  // per-check deadlines still kill a whole child that overran.
  std::optional<std::chrono::steady_clock::time_point> deadline() const;
};

class HealthCheck {
 public:
  virtual ~HealthCheck() = default;
  virtual int run(CheckRun& run) = 0;
};

struct HealthCheckSpec {
  std::vector<std::string> path;  // {"check-nvidia-smi"} or {"check-process", "check-zombie"}
  std::string help;
  bool has_timeout = true;  // the reference's --timeout (default 300 s); some checks have none
  std::function<std::unique_ptr<HealthCheck>(OptionBinder&)> setup;
};

bool register_health_check(HealthCheckSpec spec);
const std::vector<HealthCheckSpec>& health_check_registry();
// Help text of each group ("check-process": "Process checks: ...").
bool register_health_group(const std::string& name, const std::string& help);
const std::vector<std::pair<std::string, std::string>>& health_group_registry();

std::string node_hostname();

}  // namespace gcm::health
