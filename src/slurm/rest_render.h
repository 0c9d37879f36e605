// slurmrestd's answers written as the CLI output the collectors already read (gcm-newer.md §2's REST-to-CLI field
// map), so that a collector parses one format whichever back end answered, and the records of both can be compared
// field by field. What the REST API cannot say as the CLI does is listed with each function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/time_zone.h"
#include "slurm/parse_error.h"

namespace gcm::slurm {

// GET /slurm/vX/jobs as `squeue --all -O <slurm_job_monitor's 35 columns, each ending in "|#"> --noheader`, one line
// per job squeue shows by default (pending, running, suspended, completing), followed by a 36th field squeue has no
// column for: the job's gres_detail, one entry per node joined by ';' (JobData GRES_GPU_INDICES).
// Computed as squeue computes them, from `now`: TIMELEFT, TIMEUSED and PENDINGTIME. Times are written as squeue
// writes them, naive in `zone` (the host's). Cannot agree with squeue: SCHEDNODES (not in the REST API before
// v0.0.40; "(null)"), EXCNODES (Slurm 22.05's squeue prints it empty, REST gives the value), the order of the jobs.
// Throws ParseError naming the job and the key.
std::string render_squeue_jobs(std::string_view jobs_json, int64_t now, const TimeZone& zone);

// GET /slurm/vX/nodes as slurm_monitor's `sinfo --all -N -O nodelist:256|,gres:256|,gresused:256|,cpus:256|,
// cpusstate:256|,statelong:256|,partitionname:256 --noheader`: a line per node and partition. Throws ParseError.
std::string render_sinfo_nodes(std::string_view nodes_json);

// GET /slurm/vX/partitions as `scontrol show partition -a -o`: one line per partition with the keys the scontrol
// collector reads (PartitionName, QoS, MaxNodes, Nodes, PriorityJobFactor, PriorityTier, PreemptMode, TotalCPUs,
// TotalNodes, TRES, TRESBillingWeights when set), from the flat partition records of v0.0.36-v0.0.39 or the nested
// ones of v0.0.40 and later (where PreemptMode is not given: the field is then null). Throws ParseError.
std::string render_scontrol_partitions(std::string_view partitions_json);

// Slurm's time formats: secs2time_str as squeue prints it ("M:SS", "H:MM:SS", "D-HH:MM:SS"), or with the hours
// always there as sacctmgr prints it ("00:02:00"), and mins2time_str of a time limit ("UNLIMITED" for none).
std::string slurm_duration(int64_t seconds, bool always_hours = false);
std::string slurm_time_limit(std::optional<int64_t> minutes);

}  // namespace gcm::slurm
