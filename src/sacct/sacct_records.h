// The records of the sacct commands (gcm-reference.md §1.13, §1.14): Sacct (one row of `sacct -o all`, typed, for
// sacct_running) and SacctPayload (one row of any sacct -P output, as strings, for sacct_publish).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/schema.h"

namespace gcm::sacct {

// How the Sacct schema reads a column of `sacct -o all`.
enum class SacctColumnKind { String, MaybeInt, MaybeFloat, Time, NodeList };

// The Sacct schema: every column of `sacct -o all` in the reference's order, then derived_cluster.
const Schema& sacct_schema();
// The kind of Sacct field i (derived_cluster is String).
SacctColumnKind sacct_column_kind(size_t field);
// Index of derived_cluster in sacct_schema().
size_t sacct_derived_cluster_field();

// The column that holds Sacct field `field` in the `sacct -o all` of a newer Slurm that renamed it ("" when none did):
// 24.11 prints Reserved, ResvCPU and ResvCPURAW as Planned, PlannedCPU and PlannedCPURAW.
std::string_view sacct_renamed_column(std::string_view field);

// SacctPayload: time, end_ds, cluster, derived_cluster, sacct (an object of the row's header -> value strings),
// sc_host and sc_node_hosts (the Kubernetes nodes of the job's Slurm nodes, with --resolve-kubernetes-hosts).
const Schema& sacct_payload_schema();
enum SacctPayloadField : size_t {
  kPayloadTime,
  kPayloadEndDs,
  kPayloadCluster,
  kPayloadDerived,
  kPayloadSacct,
  kPayloadScHost,
  kPayloadScNodeHosts
};

// The job states of the reference's TERMINAL_JOB_STATES, lower case, in its order (sacct_backfill's -s list).
const std::vector<std::string>& terminal_job_state_names();

}  // namespace gcm::sacct
