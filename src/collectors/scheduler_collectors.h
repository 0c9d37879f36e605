// The scheduler-state collectors of GCM's 2026 additions (gcm-newer.md §1.2-1.4): gcm sprio (job priority
// factors), gcm sshare (fair-share tree) and gcm scontrol_topology (the network topology slurmctld schedules on).
// Each is a function of a slurm::SlurmClient, so the golden tests drive it with canned outputs and a second Slurm
// back end (slurmrestd) can answer the same query names without touching the record building.
//
// Failures: a command that cannot run, fails or times out, or a line that cannot be read, throws slurm::SlurmError
// naming the command line and the line number; records emitted before it stay emitted.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "collectors/collector.h"
#include "slurm/client.h"

namespace gcm::scheduler {

extern const LazySchema kSprioPayload;
extern const LazySchema kSsharePayload;
extern const LazySchema kScontrolTopology;

struct Params {
  std::string cluster;
  bool heterogeneous_cluster_v1 = false;
  int64_t now = 0;  // unix seconds: collection_unixtime, and ds (its date in America/Los_Angeles)
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

// --- sprio -------------------------------------------------------------------------------------------------------
// The SprioRow fields in order, each with the `sprio -o` code that prints it. sprio has no -O (names), and the
// headers it prints for -o are wrong for %A (AGE) and %P (PARTITION), so GCM writes its own header from these names.
struct SprioColumn {
  const char* name;
  const char* code;
  bool numeric;  // read with maybe_float (null when not a number), else kept as printed
};
const std::vector<SprioColumn>& sprio_columns();
// `sprio -h --sort=r,-y -o %i|%r|%u|...`: sorted by partition, then priority descending.
slurm::SlurmQuery sprio_query(std::chrono::milliseconds timeout);
// One SprioPayload {ds, collection_unixtime, cluster, derived_cluster, sprio: {JOBID, ..., NICE}} per job and
// partition. Slurm before 23.02 does not know %o (account) and %n (QOS name): it says so on stderr and leaves both
// columns out, so its rows have two fields fewer; such a row is read without them and ACCOUNT and QOSNAME are null.
// Returns the number of records.
size_t collect_sprio(slurm::SlurmClient& slurm, const Params& params, RecordOut& out);

// --- sshare ------------------------------------------------------------------------------------------------------
// The SshareRow keys, in GCM's order.
const std::vector<std::string>& sshare_keys();
slurm::SlurmQuery sshare_query(std::chrono::milliseconds timeout);
// One SsharePayload {ds, collection_unixtime, cluster, derived_cluster, sshare: {Account, ..., TRESRunMins}} per
// association line of `sshare -a -P`. A key sshare does not print (NormUsage, GrpTRESMins and TRESRunMins need
// -l) is null; the others are strings as printed, the Account's leading blanks (its depth in the tree) included.
size_t collect_sshare(slurm::SlurmClient& slurm, const Params& params, RecordOut& out);

// --- scontrol_topology -------------------------------------------------------------------------------------------
// At most this many names of a Nodes hostlist are written; "..." follows when there were more (node_count has the
// true number), so one spine switch of a 100 000-node cluster does not make a megabyte record.
constexpr size_t kTopologyNodesCap = 10000;
slurm::SlurmQuery scontrol_topology_query(std::chrono::milliseconds timeout);
// One ScontrolTopology record per line of `scontrol show topo`: a switch (topology/tree: SwitchName, Level,
// LinkSpeed, Nodes, Switches) or a block (topology/block: BlockName, BlockIndex, BlockSize, Nodes).
size_t collect_scontrol_topology(slurm::SlurmClient& slurm, const Params& params, RecordOut& out);

}  // namespace gcm::scheduler
