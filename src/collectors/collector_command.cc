// A collector as a `gcm` command: the shared options (collectors/shared_options.h), the collector's own, the
// [gcm.<name>] config table, the cluster name, then the collection loop. register_collector registers each
// collector as an app command through here, so the root knows one kind of command.
#include <iostream>

#include <fmt/format.h>

#include "cli/command_startup.h"
#include "cli/option_binder.h"
#include "collectors/collector.h"
#include "collectors/loop.h"
#include "collectors/slurm_backend.h"
#include "collectors/shared_options.h"
#include "health/check.h"
#include "sinks/sink.h"
#include "slurm/cluster_name.h"

namespace gcm {

namespace {

struct CollectorCommand {
  const CollectorSpec* spec = nullptr;
  std::unique_ptr<OptionBinder> binder;
  SharedOptions shared;
  std::unique_ptr<Collector> collector;
};

// The cluster name: --cluster, else Slurm's. When Slurm does not answer, "local-node" with a warning, and the loop
// asks again before each later round.
void resolve_cluster(const CollectorCommand& c, CollectorContext& ctx) {
  if (c.shared.cluster) {
    ctx.cluster = *c.shared.cluster;
    return;
  }
  ClusterNameLookup lookup = look_up_cluster_name();
  ctx.cluster = lookup.name.value_or("local-node");
  if (lookup.problem.empty()) return;
  std::string warning = cluster_name_warning(lookup);
  if (!c.shared.once) warning += "; asked again before each round";
  ctx.log->warn("{}", warning);
  std::cerr << "Warning: " << warning << "\n";
  ctx.retry_cluster = [] { return look_up_cluster_name().name; };
}

int run_collector(CollectorCommand& c, const Invocation& inv) {
  const CollectorSpec& spec = *c.spec;
  // The command's own table first (it wins), then the [gcm] table's keys shared by the Slurm collectors.
  CommandStartup startup{spec.name,
                         {{{spec.name}, c.binder.get()},
                          {{}, c.binder.get(), {}, false, slurm_backend_config_keys(), /*only_shared=*/true}}};
  startup.log = [&] {
    return LogSetup{spec.logger_name, spec.log_file_per_host ? health::node_hostname() : "", c.shared.log_folder,
                    c.shared.log_level, c.shared.log_stdout};
  };
  return run_command(inv, startup, [&](const std::shared_ptr<spdlog::logger>& log) {
    CollectorContext ctx;
    ctx.log = log;
    resolve_cluster(c, ctx);
    ctx.heterogeneous_cluster_v1 = c.shared.heterogeneous_cluster_v1;
    ctx.interval = c.shared.interval;
    ctx.gpu_backend = inv.gpu_backend;
    return run_collection_loop(spec.name, c.shared, *c.collector, ctx);
  });
}

std::map<std::string, CollectorSpec>& collectors() {
  static std::map<std::string, CollectorSpec> r;
  return r;
}

}  // namespace

bool register_collector(CollectorSpec spec) {
  std::string name = spec.name;
  std::string summary = spec.summary, help = spec.help;
  if (!collectors().emplace(name, std::move(spec)).second) {
    std::fprintf(stderr, "collector '%s' is registered twice\n", name.c_str());
    std::abort();
  }
  const CollectorSpec* registered = &collectors().at(name);  // std::map: the address stays
  return register_app_command({name, summary, help, [registered](CLI::App& sub) -> CommandRunner {
                                 auto c = std::make_shared<CollectorCommand>();
                                 c->spec = registered;
                                 sub.footer(sinks_help());
                                 c->binder = std::make_unique<OptionBinder>(sub);
                                 c->shared.add_to(*c->binder, registered->default_interval);
                                 if (registered->log_file_per_host)
                                   sub.get_option("--log-folder")
                                       ->description(fmt::format("Internal logs go to <log-folder>/{}_logs/"
                                                                 "<hostname>.log (rotated at 1 MiB, 2 backups).",
                                                                 registered->logger_name));
                                 c->collector = registered->setup(*c->binder);
                                 return [c](const Invocation& inv) { return run_collector(*c, inv); };
                               }});
}

const std::map<std::string, CollectorSpec>& collector_registry() { return collectors(); }

}  // namespace gcm
