#include "collectors/shared_options.h"

#include <fmt/format.h>

#include "cli/option_binder.h"
#include "cli/option_limits.h"
#include "sinks/sink.h"

namespace gcm {

void SharedOptions::add_to(OptionBinder& b, int64_t default_interval) {
  interval = default_interval;
  b.option("--cluster", "cluster", cluster,
           "Cluster name. Default: ClusterName from `scontrol show config`, or local-node without Slurm (with a "
           "warning when scontrol fails; daemons ask again each round).");
  b.option("--sink", "sink", sink, fmt::format("Where records go: {} (see Sinks below).", sink_names()))
      ->capture_default_str();
  b.option("-o,--sink-opt", "sink_opts", sink_opts, "Sink option key=value; repeat for several (see Sinks below).")
      ->allow_extra_args(false);
  b.option("--log-level", "log_level", log_level, "DEBUG, INFO, WARNING, ERROR or CRITICAL.")
      ->capture_default_str()
      ->transform(CLI::IsMember({"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}, CLI::ignore_case));
  b.option("--log-folder", "log_folder", log_folder,
           "Internal logs go to <log-folder>/<command>_logs/<command>.log (rotated at 1 MiB, 2 backups).")
      ->capture_default_str();
  b.flag("--stdout", "stdout", log_stdout, "Write internal logs to stdout instead of the log file.");
  b.flag("--heterogeneous-cluster-v1", "heterogeneous_cluster_v1", heterogeneous_cluster_v1,
         "Set derived_cluster to <cluster>.<partition> on per-partition records.");
  b.option("--interval", "interval", interval, "Seconds between the starts of two collection rounds (1 s to 366 days).")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->check(round_interval_seconds());
  b.flag("--once", "once", once, "Run one collection round and exit (non-zero if anything failed).");
  b.option("--retries", "retries", retries,
           "Retries of a failed sink write (retryable failures only), with exponential backoff.")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  b.option("--retry-backoff", "retry_backoff", retry_backoff,
           "Seconds before the first retry; doubles for each further retry (capped at 300).")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->check(seconds_or_zero());
  b.flag("-n,--dry-run", "dry_run", dry_run, "Print records to stdout instead of the configured sink.");
  b.option("--chunk-size", "chunk_size", chunk_size,
           "Largest chunk of records per sink write, as compact JSON bytes: N, Nk (x1000) or NM (x1000000); 0 "
           "writes each round as one chunk.")
      ->capture_default_str();
}

}  // namespace gcm
