// `gcm agent [options]` and `gcm agent status [--json]`: registers the command, reads [gcm.agent], and on SIGHUP
// reads it again under the same command line.
#include <cstdlib>
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "agent/agent.h"
#include "core/clock.h"
#include "agent/agent_options.h"
#include "agent/agent_state.h"
#include "core/host_roots.h"
#include "agent/status_text.h"
#include "cli/command_registry.h"
#include "cli/command_startup.h"
#include "cli/option_binder.h"
#include "core/config.h"
#include "core/logging.h"
#include "core/shutdown.h"
#include "core/web_config.h"

namespace gcm::agent {
namespace {

struct AgentCommand {
  CLI::App* app = nullptr;
  CLI::App* status = nullptr;
  std::unique_ptr<OptionBinder> binder;
  AgentOptions opts;
  std::vector<std::string> command_line;  // the options the command line gave, before the config filled the rest
  bool status_json = false;
  std::string status_run_dir;
};

// Checks what CLI11 cannot: values whose errors must stop the start (exit 2) rather than a later window.
std::optional<std::string> validate(const AgentOptions& o) {
  try {
    parse_byte_size(o.spool_max_bytes);
  } catch (const std::invalid_argument& e) {
    return fmt::format("--spool-max-bytes: {}", e.what());
  }
  if (!o.web_config_file.empty()) {
    if (o.listen.empty()) return "--web.config.file needs --listen (it configures /metrics)";
    try {
      load_web_config(o.web_config_file);
    } catch (const std::exception& e) {
      return fmt::format("--web.config.file: {}", e.what());
    }
  }
  if ((o.kubernetes_cordon || o.kubernetes_taint) && !o.kubernetes_condition)
    return "--kubernetes-cordon and --kubernetes-taint need --kubernetes-condition (the condition carries the evidence "
           "and says when to lift them)";
  if (o.kubernetes_condition && o.kubelet.node_name.empty() && !std::getenv("NODE_NAME"))
    return "--kubernetes-condition needs this node's Kubernetes name: --kubernetes-node, or $NODE_NAME (the downward "
           "API's spec.nodeName)";
  if (o.window_s < o.collect_interval_s)
    return fmt::format("--window {} is shorter than --collect-interval {}: a window needs at least one sample",
                       o.window_s, o.collect_interval_s);
  return std::nullopt;
}

// The options the command line gave, as arguments again (CLI11 keeps what it parsed per option).
std::vector<std::string> given_arguments(const CLI::App& app) {
  std::vector<std::string> args;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->count() == 0 || opt->get_lnames().empty()) continue;
    std::string name = "--" + opt->get_lnames().front();
    if (opt->get_type_size() == 0) {
      args.push_back(name);
      continue;
    }
    for (const auto& r : opt->results()) args.push_back(name + "=" + r);
  }
  return args;
}

// A fresh parse of the same command line plus the config file as it is now.
std::optional<AgentOptions> reread_options(const std::vector<std::string>& command_line, const std::string& config_path,
                                           spdlog::logger& log) {
  CLI::App fresh("agent");
  fresh.allow_extras(false);
  AgentOptions o;
  OptionBinder b(fresh);
  add_agent_options(b, o);
  try {
    std::vector<std::string> args = command_line;
    std::reverse(args.begin(), args.end());  // CLI11 takes the vector last argument first
    fresh.parse(args);
    ConfigFile cfg =
        ConfigFile::load(config_path.empty() ? std::nullopt : std::optional(config_path), "gcm", kGcmConfigPaths);
    apply_config(cfg, {"agent"}, b, {"status"}, [&](const std::string& w) { log.warn("agent: {}", w); });
  } catch (const std::exception& e) {
    log.error("agent: reload refused, the running configuration stays: {}", e.what());
    return std::nullopt;
  }
  if (auto err = validate(o)) {
    log.error("agent: reload refused, the running configuration stays: {}", *err);
    return std::nullopt;
  }
  return o;
}

int run_status(const AgentCommand& c) {
  std::string dir = c.status_run_dir.empty() ? c.opts.path_run : c.status_run_dir;
  std::string path = dir + "/agent-state.json";
  std::optional<AgentState> st;
  try {
    st = read_agent_state(path);
  } catch (const std::exception& e) {
    std::cerr << "Error: " << e.what() << "\n";
    return 1;
  }
  if (!st) {
    std::cerr << "Error: no agent state at " << path << " (is `gcm agent` running with --path.run " << dir << "?)\n";
    return 1;
  }
  std::cout << (c.status_json ? to_json(*st) : status_text(*st, unix_ms_now()));
  return 0;
}

int run_agent(AgentCommand& c, const Invocation& inv) {
  c.command_line = given_arguments(*c.app);
  CommandStartup startup{"agent", {{{"agent"}, c.binder.get(), {"status"}}}};
  // `gcm agent status` reads the state file of the running agent: no log of its own, no checks of the sampling
  // options.
  if (c.status->parsed()) return run_command(inv, startup, [&](const auto&) { return run_status(c); });
  startup.validate = [&] {
    if (auto err = validate(c.opts)) throw UsageError(*err);
  };
  startup.log = [&] { return LogSetup{"agent", "", c.opts.log_folder, c.opts.log_level, c.opts.log_stdout}; };
  return run_command(inv, startup, [&](const std::shared_ptr<spdlog::logger>& log) {
    install_shutdown_handlers();
    install_reload_handler();
    // gcm --backend (or [gcm] backend) is the root's: a SIGHUP rereads [gcm.agent] only, so the library stays.
    c.opts.backend = inv.gpu_backend.value_or(c.opts.backend);
    Agent agent(c.opts, log);
    std::string config_path = inv.config.path();
    agent.set_reload_source([&c, config_path, log] {
      auto o = reread_options(c.command_line, config_path, *log);
      if (o) o->backend = c.opts.backend;
      return o;
    });
    return agent.run();
  });
}

const bool kAgentCommandRegistered = register_app_command({
    "agent",
    "The node agent: samples GPUs, judges them against their peers, exports",
    "The node agent: samples every GPU each --collect-interval (per-GPU workers with call timeouts), summarises "
    "windows, follows the kernel log and NVML events for XIDs, attributes GPUs to Slurm jobs, judges each GPU "
    "against its job's other GPUs, serves /metrics, writes a textfile, pushes OTLP through an on-disk spool, and "
    "keeps <path.run>/agent-state.json for the prolog's agent-verdict check. SIGHUP reloads [gcm.agent]; SIGTERM "
    "flushes and exits 0. `gcm agent status` shows the agent's view.",
    [](CLI::App& sub) -> CommandRunner {
      auto c = std::make_shared<AgentCommand>();
      c->app = &sub;
      c->binder = std::make_unique<OptionBinder>(sub);
      add_agent_options(*c->binder, c->opts);
      c->status = sub.add_subcommand("status",
                                     "Print the agent's current view (GPUs, their job, health, active XIDs, the "
                                     "node's own reasons, the ranks of the jobs reporting their steps, checks, "
                                     "problems) from its state file; exit 1 when there "
                                     "is none.");
      c->status->add_flag("--json", c->status_json, "The state file as JSON, for scripts.");
      c->status->add_option(kRunRoot.flag, c->status_run_dir, "The agent's --path.run (default: /run/gcm).");
      return [c](const Invocation& inv) { return run_agent(*c, inv); };
    },
});

}  // namespace
}  // namespace gcm::agent
