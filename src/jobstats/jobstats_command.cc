// `gcm jobstats JOBID`: sacct for the job, Prometheus for its GPUs, then the report as text, JSON or HTML.
#include <ctime>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli/command_registry.h"
#include "core/clock.h"
#include "cli/command_startup.h"
#include "cli/option_binder.h"
#include "core/config.h"
#include "jobstats/job_series.h"
#include "jobstats/report_options.h"
#include "jobstats/report_render.h"

namespace gcm::jobstats {
namespace {

struct JobstatsCommand {
  std::unique_ptr<OptionBinder> binder;
  std::string job_id;
  SourceOptions sources;
  int64_t step = 0;
  int64_t min_step = 15;
  bool json = false;
  std::string html;
  double slow_percent = 5;
  NoteThresholds thresholds;
};

void add_options(OptionBinder& b, JobstatsCommand& c) {
  b.app().add_option("JOBID", c.job_id, "Slurm job id (an array task as 5_1); running or finished.")->required();
  add_source_options(b, c.sources);
  b.option("--step", "step", c.step,
           "Seconds between the samples read from Prometheus (0: the job's span / 1000, at least --min-step).")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  b.option("--min-step", "min_step", c.min_step, "Finest automatic step: the agents' scrape interval.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  b.option("--slow-percent", "slow_percent", c.slow_percent,
           "A busy GPU this many percent below the median SM clock of the job's other busy GPUs is slow.")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 99.0));
  b.option("--min-slow", "min_slow", c.thresholds.min_slow_seconds,
           "Seconds a GPU must be slow (or throttled) in all before a note says so: shorter is noise.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  b.flag("--json", "json", c.json, "Print the report as JSON instead of text.");
  b.option("--html", "html", c.html,
           "Also write the report as a self-contained HTML page with a per-GPU timeline (inline SVG) to FILE.");
}

int run(JobstatsCommand& c, const Invocation& inv) {
  std::unique_ptr<PrometheusApi> api;
  CommandStartup startup{"jobstats", {{{"jobstats"}, c.binder.get()}}};
  startup.validate = [&] {
    if (auto p = job_id_problem(c.job_id)) throw UsageError(*p);
    api = std::make_unique<PrometheusApi>(
        c.sources.prometheus_url,
        std::chrono::milliseconds(static_cast<int64_t>(c.sources.prometheus_timeout_s * 1000)));
  };
  return run_command(inv, startup, [&](const std::shared_ptr<spdlog::logger>&) {
    JobAllocation job = sacct_job(sacct_options(c.sources), c.job_id);
    if (!job.start)
      throw SacctError(
          fmt::format("job {} has not started (state {}): there is nothing to report yet", c.job_id, job.state));
    int64_t now = unix_time_now();
    int64_t start = *job.start, end = job.end.value_or(now);
    if (end < start) end = start;
    int64_t step = c.step > 0 ? c.step : choose_step(start, end, c.min_step);
    auto series = fetch_job_series(*api, job.job_id, c.sources.cluster, start, end, step);
    c.thresholds.slow_ratio = c.slow_percent / 100;
    JobReport report = build_job_report(job, start, end, step, series, c.thresholds);
    report.prometheus_url = api->base_url();
    if (!c.html.empty()) {
      std::ofstream out(c.html, std::ios::binary | std::ios::trunc);
      out << render_html(report);
      out.close();
      if (!out) throw std::runtime_error("--html " + c.html + ": cannot write the file");
    }
    if (c.json)
      std::cout << render_json(report).dump(2) << "\n";
    else
      std::cout << render_text(report);
    return 0;
  });
}

const bool kJobstatsCommandRegistered = register_app_command({
    "jobstats",
    "Where a job's GPU hours went, per GPU (text, JSON or HTML)",
    "Where a job's GPU hours went: per GPU utilisation, memory, SM clock, power, energy, throttling, XIDs and "
    "health (Prometheus, joined through gcm_gpu_job_info), GPU-hours allocated (sacct) vs used, and notes such as "
    "idle or slow GPUs. Text, --json, or --html FILE with a per-GPU timeline. Running and finished jobs.",
    [](CLI::App& sub) -> CommandRunner {
      auto c = std::make_shared<JobstatsCommand>();
      c->binder = std::make_unique<OptionBinder>(sub);
      add_options(*c->binder, *c);
      return [c](const Invocation& inv) { return run(*c, inv); };
    },
});

}  // namespace
}  // namespace gcm::jobstats
