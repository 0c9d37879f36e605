#include "suite/drain_limit_options.h"

#include "cli/option_binder.h"

namespace gcm {

void add_drain_limit_options(OptionBinder& b, suite::DrainLimits& limits) {
  b.option("--drain-max-per-hour", "drain_max_per_hour", limits.max_per_hour,
           "No drain when this many nodes of the cluster carry a detector drain younger than an hour (as "
           "slurmctld's reason times say).")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  b.option("--drain-max-partition-fraction", "drain_max_partition_fraction", limits.max_partition_fraction,
           "No drain when this fraction of a partition of the node is drained by the detector already (one node "
           "is always allowed).")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
}

}  // namespace gcm
