// gcm sacctmgr_qos and gcm sacctmgr_user (gcm-reference.md §1.17): the QOS table and every user's associations,
// one LOG record per row, daily. Exposed for the golden tests; the collectors live in sacctmgr_qos.cc and
// sacctmgr_user.cc.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <spdlog/logger.h>

#include "collectors/collector.h"
#include "slurm/client.h"

namespace gcm::sacctmgr {

extern const LazySchema kSacctmgrQosPayload;
extern const LazySchema kSacctmgrUserPayload;

struct Params {
  std::string cluster;
  bool heterogeneous_cluster_v1 = false;
  int64_t now = 0;  // unix seconds; ds is its date in America/Los_Angeles
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

// "YYYY-MM-DD" of unix_seconds in Pacific time (the reference's ds).
std::string pacific_date(int64_t unix_seconds);

slurm::SlurmQuery qos_query(std::chrono::milliseconds timeout);
slurm::SlurmQuery user_list_query(std::chrono::milliseconds timeout);
slurm::SlurmQuery user_assoc_query(const std::string& user, std::chrono::milliseconds timeout);

// One SacctmgrQosPayload per QOS row. A row whose field count differs from the header's is not emitted; the other
// rows are, and then a SlurmError names the command and the first such line.
void collect_qos(slurm::SlurmClient& slurm, const Params& params, RecordOut& out, spdlog::logger* log = nullptr);

// One SacctmgrUserPayload per association row of every user, keyed by the headers sacctmgr prints (GCM's keys:
// "Def Acct" and "Def QOS" on Slurm 22.05). Bad rows as for collect_qos.
void collect_users(slurm::SlurmClient& slurm, const Params& params, RecordOut& out, spdlog::logger* log = nullptr);

}  // namespace gcm::sacctmgr
