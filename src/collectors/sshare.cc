// gcm sshare (gcm-newer.md §1.4): the fair-share tree of `sshare -a -P`, one SsharePayload LOG record per
// association line, every 300 s by default.

#include <fmt/format.h>

#include "collectors/sacctmgr.h"
#include "collectors/scheduler_collectors.h"
#include "collectors/slurm_query_collector.h"
#include "slurm/derived_cluster.h"

namespace gcm::scheduler {

constinit const LazySchema kSsharePayload{[] {
  Schema s;
  s.name = "SsharePayload";
  s.description = "One association of the fair-share tree, from `sshare -a -P`.";
  s.metric_prefix = "sshare";
  s.data_type = DataType::Log;
  s.identifier = DataIdentifier::Generic;
  s.fields = {
      {"ds", FieldType::String, FieldRole::Attribute, "", "collection date YYYY-MM-DD in America/Los_Angeles"},
      {"collection_unixtime", FieldType::Int, FieldRole::Attribute, "seconds", "unix time of the collection"},
      {"cluster", FieldType::String, FieldRole::Identity, "", "cluster name"},
      {"derived_cluster", FieldType::String, FieldRole::Identity, "", "the cluster (sshare rows have no partition)"},
      {"sshare", FieldType::Object, FieldRole::Attribute, "",
       "SshareRow: Account, User, RawShares, NormShares, RawUsage, NormUsage, EffectvUsage, FairShare, GrpTRESMins, "
       "TRESRunMins as printed (strings; null for a column sshare did not print)"},
  };
  return s;
}};

const std::vector<std::string>& sshare_keys() {
  static const std::vector<std::string> keys = {"Account",   "User",         "RawShares", "NormShares",  "RawUsage",
                                                "NormUsage", "EffectvUsage", "FairShare", "GrpTRESMins", "TRESRunMins"};
  return keys;
}

slurm::SlurmQuery sshare_query(std::chrono::milliseconds timeout) {
  return {"sshare", {"sshare", "-a", "-P"}, timeout};
}

size_t collect_sshare(slurm::SlurmClient& slurm, const Params& p, RecordOut& out) {
  const auto& keys = sshare_keys();
  Record r(kSsharePayload);
  r[0] = sacctmgr::pacific_date(p.now);
  r[1] = p.now;
  r[2] = p.cluster;
  r[3] = slurm::derived_cluster([](std::string_view) { return std::optional<std::string_view>(); },
                                p.heterogeneous_cluster_v1, p.cluster);
  slurm::DelimitedOptions o;
  o.delimiter = "|";
  // The blanks before an Account are its depth in the tree: kept, as sshare prints them.
  o.trim_values = false;
  o.length_mismatch = slurm::RowLengthPolicy::Error;
  std::vector<std::optional<size_t>> where;  // column of each key in sshare's header
  Object row(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) row[i].key = keys[i];
  return slurm.stream_rows(
      sshare_query(p.timeout), o, [&](const slurm::DelimitedHeader& h, const slurm::DelimitedRow& line) {
        if (where.empty()) {
          if (!h.first("Account") || !h.first("User"))
            throw slurm::ParseError(
                fmt::format("sshare's header '{}' has no Account and User columns", fmt::join(h.names(), "|")));
          for (const auto& k : keys) where.push_back(h.first(k));
        }
        for (size_t i = 0; i < keys.size(); ++i) {
          if (where[i])
            row[i].value.set_string(line[*where[i]]);
          else
            row[i].value = Value();
        }
        r[4] = row;
        out.emit(r);
      });
}

namespace {
const bool kSshareRegistered = register_slurm_query_collector(
    {"sshare",
     "The fair-share tree, one SsharePayload record per association",
     "The fair-share tree of `sshare -a -P` (shares, usage, fair-share factor), one SsharePayload LOG record per "
     "association.",
     300, &kSsharePayload,
     "Seconds `sshare` (or its slurmrestd request) may run before it is killed and the round fails.", collect_sshare,
     /*takes_rest_backend=*/true});
}  // namespace

}  // namespace gcm::scheduler
