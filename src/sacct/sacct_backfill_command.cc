// gcm sacct_backfill [OPTIONS] new|from_file [OPTIONS] -- PUBLISH_CMD...: see backfill.h.
#include <unistd.h>

#include <climits>
#include <ctime>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/command_registry.h"
#include "core/clock.h"
#include "cli/command_startup.h"
#include "cli/option_binder.h"
#include "cli/option_limits.h"
#include "core/config.h"
#include "core/logging.h"
#include "core/shutdown.h"
#include "sacct/backfill.h"
#include "sacct/date_expr.h"
#include "slurm/cluster_name.h"
#include "slurm/parse_error.h"

namespace gcm::sacct {

namespace {

struct BackfillCommand {
  CLI::App* group = nullptr;
  CLI::App* new_cmd = nullptr;
  CLI::App* from_file_cmd = nullptr;
  std::unique_ptr<OptionBinder> group_binder, new_binder, file_binder;
  // group options
  double sleep_s = 10, sacct_timeout_s = 120, publish_timeout_s = 120, retry_wait_s = 10;
  int concurrently = 1, retries = 2;
  std::optional<std::string> cluster;
  bool once = false, log_stdout = false;
  int64_t interval = 3600;
  std::string log_folder = "sacct_running_logs", log_level = "INFO", state_file, temp_dir;
  std::string progress = "auto";
  // new
  std::string start = "3 hours ago", end = "now";
  double step_hours = 1;
  std::vector<std::string> new_publish;
  // from_file
  std::string intervals = "-";
  std::vector<std::string> file_publish;

  int run(const Invocation& inv);
  int backfill(BackfillOptions& o, spdlog::logger& log);
};

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "gcm";
  return std::string(buf, static_cast<size_t>(n));
}

int BackfillCommand::run(const Invocation& inv) {
  const bool is_new = new_cmd->parsed();
  if (!is_new && !from_file_cmd->parsed()) {
    std::cout << group->help();
    return 2;
  }
  BackfillOptions o;
  std::vector<std::string> detect_warnings;  // for the log, once it is open
  CommandStartup startup{"sacct_backfill",
                         {{{"sacct_backfill"}, group_binder.get(), {"new", "from_file"}},
                          is_new ? ConfigTable{{"sacct_backfill", "new"}, new_binder.get()}
                                 : ConfigTable{{"sacct_backfill", "from_file"}, file_binder.get()}}};
  startup.validate = [&] {
    o.publish_cmd = is_new ? new_publish : file_publish;
    if (o.publish_cmd.empty())
      throw UsageError("a publish command is required after '--' (e.g. -- gcm sacct_publish ...)");
    try {
      // The log is named after the cluster, so it opens after the detection.
      o.cluster = cluster ? *cluster : detect_cluster(std::chrono::seconds(10), [&](const std::string& w) {
        detect_warnings.push_back(w);
        std::cerr << "Warning: " << w << "\n";
      });
    } catch (const std::exception& e) {
      throw UsageError(fmt::format("cannot find the cluster name (give --cluster): {}", e.what()));
    }
  };
  startup.log = [&] { return LogSetup{"sacct_backfill", o.cluster, log_folder, log_level, log_stdout}; };
  return run_command(inv, startup, [&](const std::shared_ptr<spdlog::logger>& log) {
    for (const auto& w : detect_warnings) log->warn("{}", w);
    return backfill(o, *log);
  });
}

int BackfillCommand::backfill(BackfillOptions& o, spdlog::logger& log) {
  const bool is_new = new_cmd->parsed();
  auto ms = [](double s) { return std::chrono::milliseconds(static_cast<int64_t>(s * 1000)); };
  o.gcm_binary = self_exe();
  o.sacct_timeout = ms(sacct_timeout_s);
  o.publish_timeout = ms(publish_timeout_s);
  o.sleep = ms(sleep_s);
  o.retry_wait = ms(retry_wait_s);
  o.retries = retries;
  o.concurrently = concurrently;
  o.temp_dir = temp_dir;
  o.zone = TimeZone::host();
  o.progress = progress == "always" || (progress == "auto" && ::isatty(2) && !log_stdout);
  std::string state_path = state_file;
  if (state_path.empty()) state_path = fmt::format("{}/sacct_backfill_logs/{}.state", log_folder, o.cluster);
  if (state_path == "none") state_path.clear();
  std::unique_ptr<BackfillState> state;
  try {
    state = state_path.empty() ? std::make_unique<BackfillState>() : std::make_unique<BackfillState>(state_path);
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  std::string intervals_text;
  if (!is_new) {
    if (intervals == "-") {
      intervals_text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      std::ifstream in(intervals);
      if (!in) return usage_error(fmt::format("Invalid value for '--intervals': cannot read '{}'", intervals));
      intervals_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
  }
  install_shutdown_handlers();
  bool any_failed = false;
  while (!shutdown_requested()) {
    auto t0 = std::chrono::steady_clock::now();
    auto now = unix_time_now();
    std::vector<Chunk> chunks;
    try {
      if (is_new) {
        int64_t s = parse_date_expr(start, now, o.zone), e = parse_date_expr(end, now, o.zone);
        chunks = gen_time_bounds(s, e, static_cast<int64_t>(step_hours * 3600));
      } else {
        chunks = read_intervals(intervals_text, now, o.zone);
      }
    } catch (const slurm::ParseError& e) {
      return usage_error(e.what());
    } catch (const std::invalid_argument& e) {
      return usage_error(e.what());
    }
    log.info("sacct_backfill: {} chunk(s) for cluster {}, publishing with: {}", chunks.size(), o.cluster,
             fmt::join(o.publish_cmd, " "));
    BackfillSummary sum = run_backfill(o, chunks, *state, log);
    any_failed = any_failed || sum.failed > 0;
    if (sum.failed)
      std::cerr << fmt::format("sacct_backfill: {} of {} chunk(s) failed (see the log); rerun to retry them\n",
                               sum.failed, sum.chunks);
    if (once || shutdown_requested()) break;
    double wait = std::max(0.0, static_cast<double>(interval) -
                                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (!sleep_unless_shutdown(std::chrono::duration<double>(wait))) break;
  }
  if (shutdown_requested()) return 1;  // interrupted: unfinished chunks are done on the next run
  return any_failed ? 1 : 0;
}

const bool kSacctBackfillCommandRegistered = register_app_command({
    "sacct_backfill",
    "Publish the finished jobs of a past time range, chunk by chunk",
    "Publish finished jobs of a past time range: runs `gcm fsacct` per chunk of the range and pipes each chunk "
    "into the publish command given after `--`; a state file makes a restart skip published chunks.",
    [](CLI::App& sub) -> CommandRunner {
      auto cmd = std::make_shared<BackfillCommand>();
      cmd->group = &sub;
      sub.require_subcommand(0, 1);
      cmd->group_binder = std::make_unique<OptionBinder>(sub);
      OptionBinder& g = *cmd->group_binder;
      g.option("--sleep", "sleep", cmd->sleep_s, "Seconds between two chunks (serial mode).")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber)
          ->check(seconds_or_zero());
      g.option("--sacct-timeout", "sacct_timeout", cmd->sacct_timeout_s,
               "Seconds fsacct may take for one chunk; then it is killed and the chunk retried.")
          ->capture_default_str()
          ->check(CLI::PositiveNumber)
          ->check(timeout_seconds());
      g.option("--publish-timeout", "publish_timeout", cmd->publish_timeout_s,
               "Seconds the publish command may take for one chunk; then it is killed and the chunk retried.")
          ->capture_default_str()
          ->check(CLI::PositiveNumber)
          ->check(timeout_seconds());
      g.option("--concurrently", "concurrently", cmd->concurrently, "Chunks run at once (0: all).")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber);
      g.option("--retries", "retries", cmd->retries, "Retries of a failed chunk before it is reported failed.")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber);
      g.option("--retry-wait", "retry_wait", cmd->retry_wait_s, "Seconds between two attempts of a chunk.")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber)
          ->check(seconds_or_zero());
      g.option("--state-file", "state_file", cmd->state_file,
               "Where published chunks are recorded, so a restart skips them (default: "
               "<log-folder>/sacct_backfill_logs/<cluster>.state; 'none': no state).");
      g.option("--temp-dir", "temp_dir", cmd->temp_dir,
               "Where a chunk's sacct output is staged before publishing (default: $TMPDIR or /tmp).");
      g.option("--progress", "progress", cmd->progress,
               "Progress bar on stderr: auto (when stderr is a terminal), always or never.")
          ->capture_default_str()
          ->check(CLI::IsMember({"auto", "always", "never"}));
      g.option("--cluster", "cluster", cmd->cluster,
               "Cluster name (sacct --clusters). Default: ClusterName from `scontrol show config`.");
      g.flag("--once", "once", cmd->once, "Walk the range once and exit (non-zero if a chunk failed).");
      g.option("--interval", "interval", cmd->interval,
               "Seconds between the starts of two walks (without --once; 1 s to 366 days).")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber)
          ->check(round_interval_seconds());
      g.flag("--stdout", "stdout", cmd->log_stdout, "Write internal logs to stdout instead of the log file.");
      g.option("--log-folder", "log_folder", cmd->log_folder,
               "Logs go to <log-folder>/sacct_backfill_logs/<cluster>.log.")
          ->capture_default_str();
      g.option("--log-level", "log_level", cmd->log_level, "DEBUG, INFO, WARNING, ERROR or CRITICAL.")
          ->capture_default_str()
          ->transform(CLI::IsMember({"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}, CLI::ignore_case));

      cmd->new_cmd = sub.add_subcommand("new", "Backfill the range [--start, --end] in chunks of --step hours.");
      cmd->new_binder = std::make_unique<OptionBinder>(*cmd->new_cmd);
      OptionBinder& n = *cmd->new_binder;
      n.option("-s,--start", "start", cmd->start, "Range start (date -d syntax: ISO 8601, '3 hours ago', ...).")
          ->capture_default_str();
      n.option("-e,--end", "end", cmd->end, "Range end.")->capture_default_str();
      n.option("--step", "step", cmd->step_hours, "Chunk length in hours.")
          ->capture_default_str()
          ->check(CLI::Range(0.0, kMaxOptionSeconds / 3600));  // at most 366 days; the lower bound is gen_time_bounds'
      n.option("publish_cmd", "publish_cmd", cmd->new_publish,
               "PUBLISH_CMD: after '--', the command that reads each chunk's sacct -P output on stdin.");

      cmd->from_file_cmd =
          sub.add_subcommand("from_file", "Backfill the 'start,end' intervals listed in a CSV file (or stdin).");
      cmd->file_binder = std::make_unique<OptionBinder>(*cmd->from_file_cmd);
      OptionBinder& f = *cmd->file_binder;
      f.option("--intervals", "intervals", cmd->intervals, "CSV file of start,end rows; - reads stdin.")
          ->capture_default_str();
      f.option("publish_cmd", "publish_cmd", cmd->file_publish,
               "PUBLISH_CMD: after '--', the command that reads each chunk's sacct -P output on stdin.");
      return [cmd](const Invocation& inv) { return cmd->run(inv); };
    },
});

}  // namespace

}  // namespace gcm::sacct
