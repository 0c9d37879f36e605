// What sacct says about jobs for jobstats and usage: one allocation row per job (`sacct -X -P`), its nodes, GPUs and
// time span. Running jobs have no end yet; their span ends at the time of asking.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/time_zone.h"

namespace gcm::jobstats {

// sacct failed, timed out, printed something that is not its -P table, or knows no such job. The message names the
// command line (and the job).
struct SacctError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct JobAllocation {
  std::string job_id;          // JobIDRaw: the id Prometheus's gcm_gpu_job_info carries (array tasks have their own)
  std::string job_id_display;  // JobID: 5_1 for an array task, else the same as job_id
  std::string job_name, user, account, partition, cluster, state;
  std::string node_list;           // as sacct prints it: node[1-2]
  std::vector<std::string> nodes;  // expanded
  int64_t gpus = 0;                // AllocTRES gres/gpu (all nodes together)
  std::optional<int64_t> start;    // Unix seconds; none while pending
  std::optional<int64_t> end;      // none while running
  bool running() const { return start && !end; }
};

struct SacctOptions {
  std::string sacct = "sacct";  // the executable (PATH is searched)
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  std::vector<std::string> extra_args;  // e.g. --cluster, -M: passed before the format
  TimeZone zone = TimeZone::host();     // sacct prints naive local times
};

// The columns asked for, in order (the parser reads them by the header's names, not by position).
extern const std::vector<std::string_view> kSacctColumns;

// The argv of one job's allocation row.
std::vector<std::string> sacct_job_argv(const SacctOptions& o, std::string_view job_id);
// The argv of every job's allocation row that overlaps [since, until] (all users).
std::vector<std::string> sacct_window_argv(const SacctOptions& o, int64_t since, int64_t until);

// Parses `sacct -X -P --format=<kSacctColumns>` output (header line first). Throws SacctError naming `command` and
// the line when a row or a value is not what sacct prints.
std::vector<JobAllocation> parse_sacct_allocations(std::string_view output, const TimeZone& zone,
                                                   const std::string& command);

// Runs sacct for one job. Throws SacctError when sacct fails or does not know the job (its message names the job id).
JobAllocation sacct_job(const SacctOptions& o, std::string_view job_id);
std::vector<JobAllocation> sacct_window(const SacctOptions& o, int64_t since, int64_t until);

// A job id as sacct and Prometheus write it: digits, optionally "_<task>" or "+<component>". Others are refused
// before anything runs (they would select other jobs or none). Returns the problem, nullopt when fine.
std::optional<std::string> job_id_problem(std::string_view job_id);

}  // namespace gcm::jobstats
