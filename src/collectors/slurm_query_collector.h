// The shape of a collector that runs one Slurm query a round (sprio, sshare, scontrol_topology): a --slurm-timeout
// option (and the --slurm-backend options where slurmrestd can answer the query), one task named after the
// subcommand, and a function of a SlurmClient that reads the command's output into records. Such a collector's file
// holds its parsing and one register_slurm_query_collector() call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "collectors/collector.h"
#include "collectors/scheduler_collectors.h"

namespace gcm::scheduler {

struct SlurmQueryCollectorSpec {
  std::string name;          // the subcommand, its task and its logger
  std::string summary;       // its line in `gcm --help`
  std::string help;          // one paragraph for `gcm <name> --help`
  int64_t default_interval;  // seconds
  const LazySchema* schema;  // what it emits (registered too)
  const char* timeout_help;  // --slurm-timeout's help: the command it bounds
  size_t (*collect)(slurm::SlurmClient& slurm, const Params& params, RecordOut& out);
  // Whether the query has a slurmrestd route (slurm/rest_client.cc's kRestRoutes): then the collector takes
  // --slurm-backend and its REST options (collectors/slurm_backend.h); else it always runs the command, and offering
  // the options would promise what they cannot do.
  bool takes_rest_backend;
};

// Registers the collector and its record schema; true, for a static's initialiser.
bool register_slurm_query_collector(SlurmQueryCollectorSpec spec);

}  // namespace gcm::scheduler
