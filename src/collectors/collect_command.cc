// `gcm collect`: one daemon for the central collectors. Each collector named in `collectors` (the command line or
// [gcm.collect]) is configured exactly as its own command would be, from its [gcm.<name>] table and the [gcm]
// table's shared keys, with its own sink and interval, and runs its rounds on its own thread. The rounds that fall
// due at the same moment form one cycle and share one Slurm snapshot (slurm/snapshot.h): a query two collectors ask
// runs once, slurm_monitor's node list is read from the `sinfo --json` answer that slurm_job_monitor's JSON source
// asks for, and the cluster name is looked up once for all of them. Every collector's own command works unchanged.
//
// Schedule: a collector with interval I runs at start + k*I; cycle k*I is shared by every collector due then (60 s
// and 120 s collectors meet every 120 s). A round that overruns skips the rounds it missed (counted) rather than
// running them late, so a slow slurmctld is not asked twice as often once it answers again.
#include <atomic>
#include <chrono>
#include <ctime>
#include <iostream>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "cli/command_registry.h"
#include "cli/command_startup.h"
#include "cli/option_binder.h"
#include "collectors/collector.h"
#include "collectors/loop.h"
#include "collectors/shared_options.h"
#include "collectors/slurm_backend.h"
#include "collectors/slurm_collectors.h"
#include "core/http_listener.h"
#include "core/shutdown.h"
#include "health/check.h"
#include "slurm/cluster_name.h"
#include "slurm/rest_render.h"
#include "slurm/snapshot.h"

namespace gcm {
namespace {

// One collector run by the daemon, and what its rounds did.
struct Member {
  const CollectorSpec* spec = nullptr;
  std::unique_ptr<CLI::App> app;
  std::unique_ptr<OptionBinder> binder;
  SharedOptions shared;
  std::unique_ptr<Collector> collector;
  std::unique_ptr<CollectionRounds> rounds;

  mutable std::mutex mu;  // the figures below: written by the member's thread, read by /metrics
  uint64_t rounds_run = 0, failed_rounds = 0, skipped_rounds = 0, records = 0;
  double last_seconds = 0, total_seconds = 0;
  slurm::SnapshotCounters slurm;
};

struct CollectCommand {
  std::unique_ptr<OptionBinder> binder;
  std::vector<std::string> collectors;
  bool once = false;
  bool separate_queries = false;
  std::string listen;
  std::string log_level = "INFO";
  std::string log_folder = "/var/log/gcm";
  bool log_stdout = false;
};

void add_options(OptionBinder& b, CollectCommand& c) {
  b.option("--collector", "collectors", c.collectors,
           "A collector to run (repeatable; config: collectors = [\"slurm_monitor\", ...]): any collector command; "
           "its options come from its own [gcm.<name>] table, as for `gcm <name>`.");
  b.flag("--once", "once", c.once, "Run one cycle of every collector, then exit (1 if a round failed).");
  b.flag("--separate-queries", "separate_queries", c.separate_queries,
         "Share no Slurm answers: each collector asks Slurm for everything, as separate processes do (for "
         "comparisons).");
  b.option("--listen", "listen", c.listen,
           "HOST:PORT for the daemon's own metrics (GET /metrics: gcm_collect_* per collector) and GET /health; "
           "none when empty.");
  b.option("--log-level", "log_level", c.log_level, "DEBUG, INFO, WARNING, ERROR or CRITICAL.")->capture_default_str();
  b.option("--log-folder", "log_folder", c.log_folder, "Log directory (<folder>/collect_logs/collect.log).")
      ->capture_default_str();
  b.flag("--stdout", "stdout", c.log_stdout, "Log to stdout instead of the log folder.");
}

// A collector's options, from the config only: its own table first (it wins), then the [gcm] table's shared keys.
std::unique_ptr<Member> configure_member(const std::string& name, const Invocation& inv,
                                         std::vector<std::string>& warnings) {
  const auto& registry = collector_registry();
  auto it = registry.find(name);
  if (it == registry.end()) {
    std::string known;
    for (const auto& [n, spec] : registry) known += (known.empty() ? "" : ", ") + n;
    throw UsageError(fmt::format("collectors: unknown collector '{}' (known: {})", name, known));
  }
  auto m = std::make_unique<Member>();
  m->spec = &it->second;
  m->app = std::make_unique<CLI::App>(m->spec->help, name);
  m->binder = std::make_unique<OptionBinder>(*m->app);
  m->shared.add_to(*m->binder, m->spec->default_interval);
  m->collector = m->spec->setup(*m->binder);
  auto warn = [&](const std::string& w) { warnings.push_back(w); };
  apply_config(inv.config, {name}, *m->binder, {}, warn);
  apply_config(
      inv.config, {}, *m->binder, {}, [](const std::string&) {}, slurm_backend_config_keys(), true);
  if (m->shared.interval <= 0) throw UsageError(fmt::format("[gcm.{}] interval must be positive", name));
  return m;
}

// An option's value as configured (the collectors keep theirs private).
std::string option_value(const Member& m, const std::string& flag) {
  const CLI::Option* o = m.app->get_option_no_throw(flag);
  if (!o) return "";
  if (o->count() == 0) return o->get_default_str();
  return o->as<std::string>();
}

// Whether slurm_monitor's nodes can come from slurm_job_monitor's node answer: both run, ask the same back end, and
// the job monitor reads JSON nodes (sinfo_format = "json", or "auto" with slurmrestd; with "auto" and the commands,
// the source is known only once `sinfo -V` answers, so slurm_monitor keeps its own `sinfo -O`).
bool nodes_shared(const std::vector<std::unique_ptr<Member>>& members) {
  const Member* monitor = nullptr;
  const Member* job_monitor = nullptr;
  for (const auto& m : members) {
    if (m->spec->name == "slurm_monitor") monitor = m.get();
    if (m->spec->name == "slurm_job_monitor") job_monitor = m.get();
  }
  if (!monitor || !job_monitor) return false;
  const std::string backend = option_value(*job_monitor, "--slurm-backend");
  if (backend != option_value(*monitor, "--slurm-backend")) return false;
  const std::string format = option_value(*job_monitor, "--sinfo-format");
  return format == "json" || (format == "auto" && backend == "rest");
}

std::string metrics_text(const std::vector<std::unique_ptr<Member>>& members, const slurm::Snapshot& snapshot) {
  struct Family {
    const char* name;
    const char* type;
    const char* help;
  };
  const Family families[] = {
      {"gcm_collect_rounds_total", "counter", "Rounds run, by collector."},
      {"gcm_collect_round_failures_total", "counter", "Rounds in which a task or a write failed."},
      {"gcm_collect_rounds_skipped_total", "counter", "Rounds not run because the previous one overran its interval."},
      {"gcm_collect_records_total", "counter", "Records handed to the collector's sink."},
      {"gcm_collect_round_duration_seconds", "gauge", "Wall time of the collector's last round."},
      {"gcm_collect_round_seconds_total", "counter", "Wall time of all the collector's rounds."},
      {"gcm_collect_slurm_queries_total", "counter",
       "Slurm queries asked by the collector, by answer: run (a command or REST request), shared (another "
       "collector's answer of the same cycle)."},
  };
  std::string out;
  for (const Family& f : families) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", f.name, f.help, f.name, f.type);
    for (const auto& m : members) {
      std::lock_guard lock(m->mu);
      const std::string& c = m->spec->name;
      std::string n = f.name;
      if (n == "gcm_collect_rounds_total") out += fmt::format("{}{{collector=\"{}\"}} {}\n", n, c, m->rounds_run);
      if (n == "gcm_collect_round_failures_total")
        out += fmt::format("{}{{collector=\"{}\"}} {}\n", n, c, m->failed_rounds);
      if (n == "gcm_collect_rounds_skipped_total")
        out += fmt::format("{}{{collector=\"{}\"}} {}\n", n, c, m->skipped_rounds);
      if (n == "gcm_collect_records_total") out += fmt::format("{}{{collector=\"{}\"}} {}\n", n, c, m->records);
      if (n == "gcm_collect_round_duration_seconds")
        out += fmt::format("{}{{collector=\"{}\"}} {:.6f}\n", n, c, m->last_seconds);
      if (n == "gcm_collect_round_seconds_total")
        out += fmt::format("{}{{collector=\"{}\"}} {:.6f}\n", n, c, m->total_seconds);
      if (n == "gcm_collect_slurm_queries_total")
        out +=
            fmt::format("{0}{{collector=\"{1}\",answer=\"run\"}} {2}\n{0}{{collector=\"{1}\",answer=\"shared\"}} {3}\n",
                        n, c, m->slurm.run, m->slurm.shared);
    }
  }
  out += fmt::format(
      "# HELP gcm_collect_snapshot_bytes Slurm answers held for the cycles (the last answer of each query).\n"
      "# TYPE gcm_collect_snapshot_bytes gauge\ngcm_collect_snapshot_bytes {}\n",
      snapshot.held_bytes());
  return out;
}

// A member's rounds on its schedule until shutdown (or one round with --once).
void run_member(Member& m, slurm::Snapshot* snapshot, bool once, std::chrono::steady_clock::time_point start) {
  using Clock = std::chrono::steady_clock;
  const int64_t interval = m.shared.interval;
  for (int64_t k = 0; !shutdown_requested();) {
    const int64_t cycle = k * interval;  // seconds after start: equal for every collector due at that moment
    auto t0 = Clock::now();
    bool ok;
    slurm::SnapshotCounters counters;
    if (snapshot) {
      slurm::SnapshotRound round(*snapshot, cycle);
      ok = m.rounds->run_round();
      counters = round.counters();
    } else {
      ok = m.rounds->run_round();
    }
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    uint64_t records = m.rounds->stats().records;
    {
      std::lock_guard lock(m.mu);
      ++m.rounds_run;
      if (!ok) ++m.failed_rounds;
      m.records = records;
      m.last_seconds = seconds;
      m.total_seconds += seconds;
      m.slurm.asked += counters.asked;
      m.slurm.run += counters.run;
      m.slurm.shared += counters.shared;
      m.slurm.derived += counters.derived;
    }
    m.rounds->context().log->info("{}: round of cycle {} s in {:.3f} s, {}; Slurm queries: {} run, {} shared",
                                  m.spec->name, cycle, seconds, ok ? "ok" : "failed", counters.run, counters.shared);
    if (once) break;
    // The next due time that is still ahead; the ones already past were missed by an overrun.
    int64_t elapsed_s = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count();
    int64_t next = k + 1;
    if (next * interval <= elapsed_s) {
      int64_t caught_up = elapsed_s / interval + 1;
      std::lock_guard lock(m.mu);
      m.skipped_rounds += static_cast<uint64_t>(caught_up - next);
      next = caught_up;
    }
    k = next;
    auto due = start + std::chrono::seconds(k * interval);
    if (!sleep_unless_shutdown(std::chrono::duration<double>(due - Clock::now()))) break;
  }
}

int run(CollectCommand& c, const Invocation& inv) {
  HttpListenerOptions listen;
  CommandStartup startup{"collect", {{{"collect"}, c.binder.get()}}};
  startup.validate = [&] {
    if (c.collectors.empty())
      throw UsageError("no collectors: give --collector NAME or collectors = [...] in [gcm.collect]");
    if (!c.listen.empty()) std::tie(listen.host, listen.port) = parse_listen_address(c.listen, "--listen");
  };
  startup.log = [&] { return LogSetup{"collect", "", c.log_folder, c.log_level, c.log_stdout}; };
  return run_command(inv, startup, [&](const std::shared_ptr<spdlog::logger>& log) {
    std::vector<std::string> warnings;
    std::vector<std::unique_ptr<Member>> members;
    for (const auto& name : c.collectors) {
      for (const auto& m : members)
        if (m->spec->name == name) throw UsageError(fmt::format("collectors: '{}' is named twice", name));
      members.push_back(configure_member(name, inv, warnings));
    }
    for (const auto& w : warnings) {
      std::cerr << "Warning: " << w << "\n";
      log->warn("collect: {}", w);
    }

    // The cluster name: each collector's own cluster option, else Slurm's, asked once for all of them.
    std::optional<ClusterNameLookup> lookup;
    for (auto& m : members) {
      CollectorContext ctx;
      ctx.log = log;
      ctx.heterogeneous_cluster_v1 = m->shared.heterogeneous_cluster_v1;
      ctx.interval = m->shared.interval;
      if (m->shared.cluster) {
        ctx.cluster = *m->shared.cluster;
      } else {
        if (!lookup) {
          lookup = look_up_cluster_name();
          if (!lookup->problem.empty()) {
            std::string warning = cluster_name_warning(*lookup) + "; asked again before each round";
            log->warn("{}", warning);
            std::cerr << "Warning: " << warning << "\n";
          }
        }
        ctx.cluster = lookup->name.value_or("local-node");
        if (!lookup->problem.empty()) ctx.retry_cluster = [] { return look_up_cluster_name().name; };
      }
      m->rounds = std::make_unique<CollectionRounds>(m->spec->name, m->shared, *m->collector, ctx);
    }

    slurm::Snapshot snapshot;
    if (nodes_shared(members)) {
      // slurm_monitor's node lines from the nodes answer slurm_job_monitor's JSON source reads (same fields: the
      // REST back end renders slurmrestd's /nodes for slurm_monitor the same way).
      snapshot.derive("slurm_monitor_sinfo", {"sinfo_all_nodes_json", sinfo_all_nodes_json_argv()},
                      [](std::string_view json) { return slurm::render_sinfo_nodes(json); });
      log->info("collect: slurm_monitor's nodes are read from slurm_job_monitor's `sinfo --json` answer");
    }

    install_shutdown_handlers();
    std::unique_ptr<HttpListener> http;
    if (!c.listen.empty()) {
      http = std::make_unique<HttpListener>(listen, [&](const HttpRequest& r) {
        HttpReply rep;
        if (r.path == "/metrics") {
          rep.content_type = "text/plain; version=0.0.4; charset=utf-8";
          rep.body = metrics_text(members, snapshot);
        } else if (r.path == "/health") {
          rep.body = "ok\n";
        } else {
          rep.status = 404;
          rep.body = "not found: GET /metrics, GET /health\n";
        }
        return rep;
      });
      http->start();
    }
    std::string names;
    for (const auto& m : members)
      names += fmt::format("{}{} (every {} s)", names.empty() ? "" : ", ", m->spec->name, m->shared.interval);
    log->info("collect: running {}; Slurm answers {}{}", names,
              c.separate_queries ? "not shared" : "shared within each cycle",
              http ? fmt::format("; metrics on {} (port {})", c.listen, http->port()) : "");

    auto start = std::chrono::steady_clock::now();
    slurm::Snapshot* shared = c.separate_queries ? nullptr : &snapshot;
    std::vector<std::thread> threads;
    for (auto& m : members) threads.emplace_back([&, mp = m.get()] { run_member(*mp, shared, c.once, start); });
    for (auto& t : threads) t.join();

    int rc = 0;
    for (auto& m : members) {
      if (!m->rounds->shutdown_sink()) rc = 1;
      if (c.once && m->failed_rounds) rc = 1;
      if (c.once)
        std::cerr << fmt::format("{}: {} record(s), {} failed round(s), Slurm queries: {} run, {} shared, {:.3f} s\n",
                                 m->spec->name, m->records, m->failed_rounds, m->slurm.run, m->slurm.shared,
                                 m->total_seconds);
    }
    if (http) http->stop();
    if (shutdown_requested()) log->info("collect: stopped by signal");
    return rc;
  });
}

const bool kCollectCommandRegistered = register_app_command({
    "collect",
    "Run several collectors in one daemon, sharing one Slurm snapshot",
    "Runs several collectors in one daemon (collectors = [...] in [gcm.collect], or --collector), each configured "
    "by its own [gcm.<name>] table with its own sink and interval. The rounds due at the same moment share one Slurm "
    "snapshot: a query two collectors ask runs once, slurm_monitor's nodes come from the `sinfo --json` answer "
    "slurm_job_monitor reads (with sinfo_format = \"json\"), and the cluster name is asked once. Exports "
    "gcm_collect_* self-metrics per collector with --listen.",
    [](CLI::App& sub) -> CommandRunner {
      auto c = std::make_shared<CollectCommand>();
      c->binder = std::make_unique<OptionBinder>(sub);
      add_options(*c->binder, *c);
      return [c](const Invocation& inv) { return run(*c, inv); };
    },
});

}  // namespace
}  // namespace gcm
