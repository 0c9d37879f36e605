// `gcm usage --by account|user|partition --since ...`: GPU-hours allocated and used per group over a period.
#include <ctime>
#include <iostream>

#include <fmt/format.h>

#include "cli/command_registry.h"
#include "core/clock.h"
#include "cli/command_startup.h"
#include "cli/option_binder.h"
#include "core/config.h"
#include "jobstats/report_options.h"
#include "jobstats/usage.h"
#include "sacct/date_expr.h"
#include "slurm/parse_error.h"

namespace gcm::jobstats {
namespace {

struct UsageCommand {
  std::unique_ptr<OptionBinder> binder;
  SourceOptions sources;
  std::string by = "account";
  std::string since, until = "now";
  int64_t step = 60;
  bool json = false, csv = false;
};

void add_options(OptionBinder& b, UsageCommand& c) {
  b.option("--by", "by", c.by, "Group by account, user or partition.")->capture_default_str();
  b.option("--since", "since", c.since,
           "Start of the period: 2026-11-01, 2026-11-01T08:00, @UNIX, \"30 days ago\", yesterday (local time "
           "unless an offset is given).")
      ->required();
  b.option("--until", "until", c.until, "End of the period, in the same forms.")->capture_default_str();
  add_source_options(b, c.sources);
  b.option("--step", "step", c.step,
           "Seconds between the utilisation samples summed (the deploy/ recording rules use 60).")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  auto* j = b.flag("--json", "json", c.json, "Print JSON instead of a table.");
  b.flag("--csv", "csv", c.csv, "Print CSV (group,jobs,gpu_hours_allocated,gpu_hours_used) instead of a table.")
      ->excludes(j);
}

int run(UsageCommand& c, const Invocation& inv) {
  UsageBy by;
  int64_t since = 0, until = 0;
  std::unique_ptr<PrometheusApi> api;
  SacctOptions so;
  CommandStartup startup{"usage", {{{"usage"}, c.binder.get()}}};
  startup.validate = [&] {
    by = parse_usage_by(c.by);
    so = sacct_options(c.sources);
    int64_t now = unix_time_now();
    try {
      since = sacct::parse_date_expr(c.since, now, so.zone);
      until = sacct::parse_date_expr(c.until, now, so.zone);
    } catch (const slurm::ParseError& e) {
      throw std::invalid_argument(std::string("--since/--until: ") + e.what());
    }
    if (until <= since)
      throw std::invalid_argument(fmt::format("--until ({}) must be after --since ({})", c.until, c.since));
    api = std::make_unique<PrometheusApi>(
        c.sources.prometheus_url,
        std::chrono::milliseconds(static_cast<int64_t>(c.sources.prometheus_timeout_s * 1000)));
  };
  return run_command(inv, startup, [&](const std::shared_ptr<spdlog::logger>&) {
    auto jobs = sacct_window(so, since, until);
    auto use = fetch_job_use(*api, since, until, c.step, c.sources.cluster);
    auto report = build_usage(by, since, until, jobs, use);
    if (c.json)
      std::cout << render_usage_json(report).dump(2) << "\n";
    else if (c.csv)
      std::cout << render_usage_csv(report);
    else
      std::cout << render_usage_text(report);
    return 0;
  });
}

const bool kUsageCommandRegistered = register_app_command({
    "usage",
    "GPU-hours allocated and used per account, user or partition",
    "GPU-hours allocated (sacct) and used (utilisation-weighted, Prometheus through gcm_gpu_job_info) per account, "
    "user or partition over a period, for budget reports. Running jobs count up to --until.",
    [](CLI::App& sub) -> CommandRunner {
      auto c = std::make_shared<UsageCommand>();
      c->binder = std::make_unique<OptionBinder>(sub);
      add_options(*c->binder, *c);
      return [c](const Invocation& inv) { return run(*c, inv); };
    },
});

}  // namespace
}  // namespace gcm::jobstats
