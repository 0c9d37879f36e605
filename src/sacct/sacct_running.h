// gcm sacct_running (gcm-reference.md §1.13): every round, a Sacct record per row of
// `sacct -P -s running,r --delimiter |# -a -o all --duplicates --noconvert`, after the multi-line repair (§1.7).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "collectors/collector.h"
#include "core/time_zone.h"
#include "slurm/client.h"

namespace gcm::sacct {

// The reference's argv, exactly.
std::vector<std::string> sacct_running_argv(const std::string& delimiter = "|#");

struct SacctRunningOptions {
  std::string delimiter = "|#";
  std::chrono::milliseconds timeout{std::chrono::seconds(300)};
  TimeZone zone;  // naive sacct times are read and written in it (the host's zone)
};

struct SacctRunningStats {
  size_t records = 0;
  size_t skipped_rows = 0;    // rows whose field count differs from the header's (parse_delimited's warning)
  size_t not_sacct_rows = 0;  // rows whose JobID is not a job id (garbage in the output)
  size_t bad_values = 0;      // times that are not dates, kept as sacct printed them
  bool unterminated = false;  // the output ended inside a broken record
};

// Streams the query's output into Sacct records. Throws slurm::SlurmError (command failure, timeout, a broken record
// with too many delimiters, a first line that is not a sacct header), naming the line.
SacctRunningStats collect_sacct_running(slurm::SlurmClient& client, const CollectorContext& ctx,
                                        const SacctRunningOptions& o, RecordOut& out);

}  // namespace gcm::sacct
