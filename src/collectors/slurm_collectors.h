// The Slurm snapshot collectors (gcm-reference.md §1.12, §1.18): slurm_job_monitor (NodeData from
// `sinfo --all -N -o %all`, JobData from `squeue --all -O ...`), scontrol (one Scontrol record per partition) and
// scontrol_config (one ScontrolConfig record). Each collection is a function of a SlurmClient, so tests drive it
// with canned outputs (CannedSlurmClient) and the commands run through CliSlurmClient with a timeout.
//
// Failures: a command that cannot run, fails, times out, or prints a line that cannot be parsed throws
// slurm::SlurmError naming the command line (and the line number); records emitted before it stay emitted.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "collectors/collector.h"
#include "collectors/slurm_timeout_option.h"
#include "core/time_zone.h"
#include "slurm/client.h"

namespace gcm {

// Exact argv of the reference (§1.5).
const std::vector<std::string>& sinfo_all_nodes_argv();
// GCM's newest node source (gcm-newer.md §1.6): `sinfo --all -N --json`.
const std::vector<std::string>& sinfo_all_nodes_json_argv();
const std::vector<std::string>& squeue_jobs_argv();
const std::vector<std::string>& scontrol_partitions_argv();
const std::vector<std::string>& scontrol_config_argv();
// The 35 squeue -O columns (GCM's 2026 list: the 2025 reference's 34 and LASTSCHEDEVAL), in argv order.
const std::vector<std::string>& squeue_columns();

const Schema& node_data_schema();
const Schema& job_data_schema();
const Schema& scontrol_schema();
const Schema& scontrol_config_schema();

// Where NodeData comes from: the text of `sinfo --all -N -o %all` (GCM's 2025 source, every Slurm version) or
// `sinfo --all -N --json` (GCM's 2026 source; Slurm 23.11+ layout, and 22.05-23.02's node records).
enum class SinfoFormat { Text, Json };

struct SlurmSnapshotOptions {
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};  // per command (--slurm-timeout)
  TimeZone zone;                    // squeue times: naive values are read in it and written with its offset (host zone)
  int64_t collection_unixtime = 0;  // NodeData/JobData collection_unixtime; 0: the time of the call
  SinfoFormat sinfo_format = SinfoFormat::Text;
  // The squeue_jobs answer comes from slurmrestd (slurm/rest_render.h): each line has a 36th field, the job's
  // gres_detail, which fills GRES_GPU_INDICES.
  bool squeue_gres_detail = false;
};

// NodeData records, one per sinfo row (node and partition), from o.sinfo_format's source. sinfo's output is held in
// memory once (num_rows, the row count, is in every record, so it must be known before the first is written);
// 10 000 nodes are about 3 MB of text. Returns the row count.
size_t collect_slurm_nodes(slurm::SlurmClient& client, const CollectorContext& ctx, const SlurmSnapshotOptions& o,
                           RecordOut& out);
// JobData records, streamed: one squeue line is parsed and written at a time. Returns the job count.
size_t collect_slurm_jobs(slurm::SlurmClient& client, const CollectorContext& ctx, const SlurmSnapshotOptions& o,
                          RecordOut& out);
// Scontrol records, one per partition line. Returns their number.
size_t collect_scontrol_partitions(slurm::SlurmClient& client, const CollectorContext& ctx,
                                   const SlurmSnapshotOptions& o, RecordOut& out);
// The one ScontrolConfig record.
void collect_scontrol_config(slurm::SlurmClient& client, const CollectorContext& ctx, const SlurmSnapshotOptions& o,
                             RecordOut& out);

// Gives the schema's measurements Prometheus-style metric names: GCM's field names stay as they are in records,
// metric names become snake case ("NUM_GPUS" -> num_gpus, "TresBillingWeightCPU" -> tres_billing_weight_cpu).
void snake_case_metric_names(Schema& s);

}  // namespace gcm
