// gcm sprio (gcm-newer.md §1.3): the priority factors of every pending job, one SprioPayload LOG record per job and
// partition, every 120 s by default.

#include <fmt/format.h>

#include "collectors/sacctmgr.h"
#include "core/ascii.h"
#include "collectors/scheduler_collectors.h"
#include "collectors/slurm_query_collector.h"
#include "core/subprocess.h"
#include "slurm/coerce.h"
#include "slurm/derived_cluster.h"

namespace gcm::scheduler {

constinit const LazySchema kSprioPayload{[] {
  Schema s;
  s.name = "SprioPayload";
  s.description = "The priority factors of one pending job in one partition, from `sprio -o`.";
  s.metric_prefix = "sprio";
  s.data_type = DataType::Log;
  s.identifier = DataIdentifier::Generic;
  s.fields = {
      {"ds", FieldType::String, FieldRole::Attribute, "", "collection date YYYY-MM-DD in America/Los_Angeles"},
      {"collection_unixtime", FieldType::Int, FieldRole::Attribute, "seconds", "unix time of the collection"},
      {"cluster", FieldType::String, FieldRole::Identity, "", "cluster name"},
      {"derived_cluster", FieldType::String, FieldRole::Identity, "",
       "<cluster>.<PARTITION> with --heterogeneous-cluster-v1, else the cluster"},
      {"sprio", FieldType::Object, FieldRole::Attribute, "",
       "SprioRow: JOBID, PARTITION, USER, ACCOUNT, PRIORITY, SITE, AGE, ASSOC, FAIRSHARE, JOBSIZE, PARTITION_PRIO, "
       "QOSNAME, QOS, NICE; the numbers as floats (null when sprio printed no number)"},
  };
  return s;
}};

const std::vector<SprioColumn>& sprio_columns() {
  static const std::vector<SprioColumn> columns = {
      {"JOBID", "%i", true},    {"PARTITION", "%r", false},     {"USER", "%u", false},
      {"ACCOUNT", "%o", false}, {"PRIORITY", "%Y", true},       {"SITE", "%S", true},
      {"AGE", "%a", true},      {"ASSOC", "%A", true},          {"FAIRSHARE", "%F", true},
      {"JOBSIZE", "%J", true},  {"PARTITION_PRIO", "%P", true}, {"QOSNAME", "%n", false},
      {"QOS", "%Q", true},      {"NICE", "%N", true},
  };
  return columns;
}

slurm::SlurmQuery sprio_query(std::chrono::milliseconds timeout) {
  std::string spec;
  for (const auto& c : sprio_columns()) {
    if (!spec.empty()) spec += '|';
    spec += c.code;
  }
  return {"sprio", {"sprio", "-h", "--sort=r,-y", "-o", spec}, timeout};
}

namespace {

// The codes Slurm 22.05's sprio does not know; it drops them from its output (and says so on stderr).
bool missing_before_2302(const SprioColumn& c) {
  return std::string_view(c.code) == "%o" || std::string_view(c.code) == "%n";
}

}  // namespace

size_t collect_sprio(slurm::SlurmClient& slurm, const Params& p, RecordOut& out) {
  const auto& columns = sprio_columns();
  const size_t all = columns.size();
  size_t old = 0;
  for (const auto& c : columns) old += missing_before_2302(c) ? 0 : 1;
  Record r(kSprioPayload);
  r[0] = sacctmgr::pacific_date(p.now);
  r[1] = p.now;
  r[2] = p.cluster;
  Object row(all);
  for (size_t i = 0; i < all; ++i) row[i].key = columns[i].name;
  std::vector<std::string_view> f;
  size_t n = 0;
  slurm.stream_lines(sprio_query(p.timeout), [&](std::string_view line) {
    if (ascii_trim(line).empty()) return;
    slurm::split_fields(ascii_trim(line), "|", f);
    if (f.size() != all && f.size() != old)
      throw slurm::ParseError(fmt::format(
          "expected {} '|'-separated fields ({} from a sprio without %o and %n, before Slurm 23.02), got {}", all, old,
          f.size()));
    const bool short_row = f.size() == old;
    std::string_view partition;
    for (size_t i = 0, k = 0; i < all; ++i) {
      Value& v = row[i].value;
      if (short_row && missing_before_2302(columns[i])) {
        v = Value();
        continue;
      }
      std::string_view text = ascii_trim(f[k++]);
      if (columns[i].numeric) {
        auto d = slurm::maybe_float(text);
        v = d ? Value(*d) : Value();
      } else {
        v.set_string(text);
      }
      if (std::string_view(columns[i].name) == "PARTITION") partition = text;
    }
    r[3] = slurm::derived_cluster(
        [&](std::string_view key) -> std::optional<std::string_view> {
          if (key == "PARTITION") return partition;
          return std::nullopt;
        },
        p.heterogeneous_cluster_v1, p.cluster);
    r[4] = row;
    out.emit(r);
    ++n;
  });
  return n;
}

namespace {
const bool kSprioRegistered = register_slurm_query_collector(
    {"sprio",
     "The priority factors of every pending job",
     "The priority factors of every pending job (`sprio -h --sort=r,-y -o ...` with GCM's own header), one "
     "SprioPayload LOG record per job and partition.",
     120, &kSprioPayload, "Seconds `sprio` may run before it is killed and the round fails.", collect_sprio,
     /*takes_rest_backend=*/false});
}  // namespace

}  // namespace gcm::scheduler
