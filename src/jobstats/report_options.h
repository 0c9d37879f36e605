// Options that gcm jobstats and gcm usage share: where Prometheus and sacct are, and how long each may take.
#pragma once

#include <string>

#include "cli/cli_fwd.h"
#include "jobstats/sacct_jobs.h"

namespace gcm::jobstats {

struct SourceOptions {
  std::string prometheus_url = "http://127.0.0.1:9090";
  double prometheus_timeout_s = 30;
  std::string cluster;  // Slurm ClusterName: sacct -M and the Prometheus cluster label; "" for sacct's default
  std::string sacct = "sacct";
  double sacct_timeout_s = 60;
};

void add_source_options(OptionBinder& b, SourceOptions& o);

// The sacct settings these options give.
SacctOptions sacct_options(const SourceOptions& o);

}  // namespace gcm::jobstats
