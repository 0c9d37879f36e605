// The options every collector shares (the reference's §1.3), registered on each collector's subcommand.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/cli_fwd.h"

namespace gcm {

struct SharedOptions {
  std::optional<std::string> cluster;
  std::string sink = "stdout";
  std::vector<std::string> sink_opts;
  std::string log_level = "INFO";
  std::string log_folder = "sacct_running_logs";
  bool log_stdout = false;
  bool heterogeneous_cluster_v1 = false;
  int64_t interval = 0;
  bool once = false;
  int retries = 2;
  double retry_backoff = 10;
  bool dry_run = false;
  std::string chunk_size = "1M";

  void add_to(OptionBinder& b, int64_t default_interval);
};

}  // namespace gcm
