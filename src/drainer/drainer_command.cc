// `gcm drainer`: options, start-up and the wait for SIGTERM. The work is in drainer/drainer.h.
#include <iostream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/command_registry.h"
#include "cli/command_startup.h"
#include "suite/drain_limit_options.h"
#include "cli/option_binder.h"
#include "collectors/slurm_timeout_option.h"
#include "core/config.h"
#include "core/logging.h"
#include "core/shutdown.h"
#include "core/web_config.h"
#include "drainer/drainer.h"
#include "suite/slurm_node.h"

namespace gcm::drainer {
namespace {

struct DrainerCommand {
  std::unique_ptr<OptionBinder> binder;
  std::string listen = "127.0.0.1:9467";
  std::string web_config_file;
  bool drain = false;
  suite::DrainLimits limits;
  std::string node_label = "node";
  std::string scontrol;
  std::string slurm_conf;
  double slurm_timeout_s = 10;
  std::string log_level = "INFO";
  std::string log_folder = "/var/log/gcm";
  bool log_stdout = false;
};

void add_options(OptionBinder& b, DrainerCommand& c) {
  b.option("--listen", "listen", c.listen,
           "HOST:PORT for Alertmanager's webhook (POST /alertmanager), /metrics and /health.")
      ->capture_default_str();
  b.option("--web.config.file", "web_config_file", c.web_config_file,
           "exporter-toolkit web config: TLS, client certificates, basic auth (Alertmanager's http_config speaks "
           "them all).");
  b.flag("--drain", "drain", c.drain,
         "Drain nodes (scontrol update State=DRAIN Reason=\"gcm: detector: <gcm_evidence>\"). Off: report only, "
         "the log says what would have been drained.");
  add_drain_limit_options(b, c.limits);
  b.option("--node-label", "node_label", c.node_label, "The alert label that names the Slurm node.")
      ->capture_default_str();
  b.option("--scontrol", "scontrol", c.scontrol, "scontrol to run (default: PATH, then the usual places).");
  b.option("--slurm-conf", "slurm_conf", c.slurm_conf, "slurm.conf for scontrol (default: $SLURM_CONF, ...).");
  add_slurm_timeout_option(b, c.slurm_timeout_s, "Seconds an scontrol call may take.");
  b.option("--log-level", "log_level", c.log_level, "DEBUG, INFO, WARNING, ERROR or CRITICAL.")->capture_default_str();
  b.option("--log-folder", "log_folder", c.log_folder, "Log directory (<folder>/drainer_logs/drainer.log).")
      ->capture_default_str();
  b.flag("--stdout", "stdout", c.log_stdout, "Log to stdout instead of the log folder.");
}

int run(DrainerCommand& c, const Invocation& inv) {
  DrainerOptions o;
  CommandStartup startup{"drainer", {{{"drainer"}, c.binder.get()}}};
  startup.validate = [&] {
    std::tie(o.listen.host, o.listen.port) = parse_listen_address(c.listen, "--listen");
    if (!c.web_config_file.empty()) apply_web_config(o.listen, load_web_config(c.web_config_file));
    o.listen.max_body = 4u << 20;  // Alertmanager groups alerts; thousands of them fit in far less
    o.drain = c.drain;
    o.limits = c.limits;
    o.node_label = c.node_label;
    auto scontrol = suite::locate_scontrol(c.scontrol.empty() ? std::nullopt : std::optional(c.scontrol));
    if (!scontrol)
      throw UsageError(
          "scontrol not found (PATH, /usr/bin, /usr/local/bin, /opt/slurm/bin, /usr/sbin); give "
          "--scontrol");
    o.scontrol = suite::make_scontrol_runner(
        *scontrol, suite::locate_slurm_conf(c.slurm_conf.empty() ? std::nullopt : std::optional(c.slurm_conf)),
        c.slurm_timeout_s);
  };
  startup.log = [&] { return LogSetup{"drainer", "", c.log_folder, c.log_level, c.log_stdout}; };
  return run_command(inv, startup, [&](const std::shared_ptr<spdlog::logger>& log) {
    install_shutdown_handlers();
    Drainer d(std::move(o), log);
    d.start();
    log->info(
        "drainer: listening on {} (port {}); drain {}; at most {} detector drains an hour, {:g} % of a "
        "partition",
        c.listen, d.port(), c.drain ? "on" : "off (report only)", c.limits.max_per_hour,
        c.limits.max_partition_fraction * 100);
    while (!shutdown_requested()) sleep_unless_shutdown(std::chrono::seconds(1));
    log->info("drainer: stopping");
    d.stop();
    return 0;
  });
}

const bool kDrainerCommandRegistered = register_app_command({
    "drainer",
    "Drain the node of each firing alert labelled gcm_action=\"drain\"",
    "Receives Alertmanager's webhook (POST /alertmanager) and drains the node of each firing alert labelled "
    "gcm_action=\"drain\" (e.g. GcmPeerSlowNode from deploy/prometheus/rules/gcm-peer-node.yml) with "
    "Reason=\"gcm: detector: <gcm_evidence>\": never a node drained or marked for another reason, at most "
    "--drain-max-per-hour and --drain-max-partition-fraction. Report-only without --drain. Resolved alerts resume "
    "nothing: `gcm agent --drain` resumes the node after its [confirm] checks pass.",
    [](CLI::App& sub) -> CommandRunner {
      auto c = std::make_shared<DrainerCommand>();
      c->binder = std::make_unique<OptionBinder>(sub);
      add_options(*c->binder, *c);
      return [c](const Invocation& inv) { return run(*c, inv); };
    },
});

}  // namespace
}  // namespace gcm::drainer
