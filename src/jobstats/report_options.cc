#include "jobstats/report_options.h"

#include <chrono>

#include "cli/option_binder.h"

namespace gcm::jobstats {

void add_source_options(OptionBinder& b, SourceOptions& o) {
  b.option("--prometheus-url", "prometheus_url", o.prometheus_url,
           "Prometheus that scrapes the gcm agents / nvml_monitor (http:// or https://, a path prefix is kept).")
      ->capture_default_str();
  b.option("--prometheus-timeout", "prometheus_timeout", o.prometheus_timeout_s, "Seconds one query may take.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  b.option("--cluster", "cluster", o.cluster,
           "Slurm ClusterName: passed to sacct (-M) and matched against the series' cluster label. Default: "
           "sacct's own cluster and every cluster label.");
  b.option("--sacct", "sacct", o.sacct, "sacct to run (a name is looked up on PATH).")->capture_default_str();
  b.option("--sacct-timeout", "sacct_timeout", o.sacct_timeout_s, "Seconds sacct may take.")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
}

SacctOptions sacct_options(const SourceOptions& o) {
  SacctOptions s;
  s.sacct = o.sacct;
  s.timeout = std::chrono::milliseconds(static_cast<int64_t>(o.sacct_timeout_s * 1000));
  if (!o.cluster.empty()) s.extra_args = {"-M", o.cluster};
  return s;
}

}  // namespace gcm::jobstats
