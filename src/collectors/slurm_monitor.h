// gcm slurm_monitor (gcm-reference.md §1.11): cluster-wide (and, with --heterogeneous-cluster-v1, per-partition)
// aggregates of `sinfo` nodes, `sdiag` statistics and the jobs `sacct` reports in the last --interval seconds.
// Exposed for the golden tests; the collector itself lives in slurm_monitor.cc.
#pragma once

#include <chrono>
#include <deque>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "collectors/collector.h"
#include "core/time_zone.h"
#include "slurm/client.h"
#include "slurm/sdiag.h"

namespace gcm::slurm_monitor {

extern const LazySchema kSlurmLog;
extern const LazySchema kSlurmLogAccountMetrics;

// One row of `sinfo -N -O nodelist,gres,gresused,cpus,cpusstate,statelong,partitionname`.
struct SinfoNode {
  std::string name, state_text, partition;
  int64_t total_cpus = 0, alloc_cpus = 0;
  int64_t gpus = 0, gpus_used = 0;  // GPU counts of GRES and GRES_USED
};

// One job of the sacct window (SacctMetrics).
struct SacctJob {
  std::string user, account, state;
  int64_t alloc_cpus = 0, alloc_gpus = 0, alloc_nodes = 0, req_nodes = 0, req_gpus = 0;
  int64_t runtime_s = 0, suspended_s = 0;
  std::optional<int64_t> submit, start, end;  // unix seconds; end is the window end for "Unknown"
};

// A deque: 100 000 jobs grow without the copy (and double peak memory) of a vector's reallocation.
using SacctJobs = std::deque<SacctJob>;

struct Params {
  std::string cluster;
  bool heterogeneous_cluster_v1 = false;
  int64_t interval = 300;  // the sacct window is [now - interval, now]
  int64_t now = 0;         // unix seconds
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  // The zone the sacct window is written in (without an offset) and sacct's times are read in: the zone the sacct
  // process runs in. The collector runs sacct with TZ=UTC and passes UTC.
  TimeZone sacct_zone;
  // The Slurm version, (major, minor); nullopt: ask `sinfo -V` (23.02 and later have `sdiag --json`).
  std::optional<std::pair<int, int>> slurm_version;
  // Read `sdiag --all --json` whatever the version (slurmrestd's /diag answers it); false: choose by the version.
  bool sdiag_json = false;
  // Run `sdiag --reset` once sdiag was read (--sdiag-reset), so that its counters cover one round; a failed reset
  // (it needs root or SlurmUser) is a warning, not a failed round.
  bool sdiag_reset = false;
};

// The queries, exactly as run.
slurm::SlurmQuery sinfo_query(std::chrono::milliseconds timeout);
slurm::SlurmQuery sdiag_query(bool json, std::chrono::milliseconds timeout);
slurm::SlurmQuery version_query(std::chrono::milliseconds timeout);
slurm::SlurmQuery sdiag_reset_query(std::chrono::milliseconds timeout);
slurm::SlurmQuery sacct_query(int64_t start, int64_t end, const TimeZone& zone, const std::string& partition,
                              std::chrono::milliseconds timeout);

std::vector<SinfoNode> read_sinfo(slurm::SlurmClient& slurm, std::chrono::milliseconds timeout,
                                  spdlog::logger* log = nullptr);
SacctJobs read_sacct(slurm::SlurmClient& slurm, const slurm::SlurmQuery& query, int64_t window_end,
                     const TimeZone& zone);

// Emits the records of one scope: SLURMLogAccountMetrics per account of the running jobs, then SLURMLog.
void emit_scope(const std::string& cluster, const std::string& derived_cluster, const std::vector<SinfoNode>& nodes,
                const SacctJobs& jobs, const slurm::Sdiag& sdiag, int64_t window_start, int64_t window_end,
                RecordOut& out, RecordOut* logs_out = nullptr);

// One round: per partition (with the flag) then cluster-wide. `sacct` runs the sacct queries (the collector's runs
// with TZ=UTC), `slurm` everything else. A failed per-partition sacct skips that partition's records; the other
// scopes are still emitted and the round then fails with the first error. With logs_out, SLURMLog records go there
// and only the account records to out. With sdiag_out, the statistics read are stored there (for the Sdiag record).
void collect(slurm::SlurmClient& slurm, slurm::SlurmClient& sacct, const Params& params, RecordOut& out,
             spdlog::logger* log = nullptr, RecordOut* logs_out = nullptr, slurm::Sdiag* sdiag_out = nullptr);

}  // namespace gcm::slurm_monitor
