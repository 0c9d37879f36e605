// gcm sacctmgr_qos: `sacctmgr show qos -P`, one SacctmgrQosPayload {ds, cluster, derived_cluster, sacctmgr_qos:
// {column: value}} per QOS. With --heterogeneous-cluster-v1, derived_cluster takes the partition from the QOS name
// up to its first '_' (the reference's rule for QOS records).
#include <ctime>

#include <fmt/format.h>

#include "collectors/sacctmgr.h"
#include "core/clock.h"
#include "collectors/sacctmgr_table.h"
#include "collectors/slurm_backend.h"
#include "collectors/slurm_collectors.h"
#include "core/subprocess.h"
#include "core/time_zone.h"
#include "slurm/derived_cluster.h"
#include "slurm/timestamp.h"

namespace gcm::sacctmgr {

constinit const LazySchema kSacctmgrQosPayload{[] {
  Schema s;
  s.name = "SacctmgrQosPayload";
  s.description = "One Slurm QOS as `sacctmgr show qos -P` prints it.";
  s.metric_prefix = "sacctmgr_qos";
  s.data_type = DataType::Log;
  s.identifier = DataIdentifier::Generic;
  s.fields = {
      {"ds", FieldType::String, FieldRole::Attribute, "", "collection date YYYY-MM-DD in America/Los_Angeles"},
      {"cluster", FieldType::String, FieldRole::Identity, "", "cluster name"},
      {"derived_cluster", FieldType::String, FieldRole::Identity, "",
       "<cluster>.<QOS name up to its first '_'> with --heterogeneous-cluster-v1, else the cluster"},
      {"sacctmgr_qos", FieldType::Object, FieldRole::Attribute, "",
       "{column: value} of the QOS row (Name, Priority, GraceTime, Preempt, ..., MinTRES), values as printed"},
  };
  return s;
}};

std::string pacific_date(int64_t unix_seconds) {
  static const TimeZone pacific = TimeZone::load("America/Los_Angeles");
  return slurm::format_date(slurm::in_zone(slurm::Timestamp{unix_seconds, 0, 0}, pacific));
}

slurm::SlurmQuery qos_query(std::chrono::milliseconds timeout) {
  return {"sacctmgr_qos", {"sacctmgr", "show", "qos", "-P"}, timeout};
}

size_t stream_table(slurm::SlurmClient& slurm, const slurm::SlurmQuery& query,
                    const std::function<std::string(std::string_view)>& rename, const TableRowHandler& on_row,
                    TableProblems& problems, spdlog::logger* log) {
  slurm::DelimitedOptions o;
  o.delimiter = "|";
  o.length_mismatch = slurm::RowLengthPolicy::Keep;  // Zip would cut a long row to the header unseen
  std::vector<std::string> names;
  Object obj;
  size_t n = 0;
  slurm.stream_rows(query, o, [&](const slurm::DelimitedHeader& h, const slurm::DelimitedRow& row) {
    if (names.empty())
      for (const auto& name : h.names()) names.push_back(rename ? rename(name) : name);
    if (row.fields.size() != h.size()) {
      std::string why = fmt::format("{} fields, the header has {}", row.fields.size(), h.size());
      if (log) log->error("`{}`, line {}: {}; row skipped", command_line(query.argv), row.line_number, why);
      if (!problems.count++)
        problems.first = slurm::SlurmError(query.name, command_line(query.argv), row.line_number, why);
      return;
    }
    obj.resize(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      obj[i].key = names[i];
      obj[i].value.set_string(row.fields[i]);
    }
    on_row(obj);
    ++n;
  });
  return n;
}

void TableProblems::raise() const {
  if (!count) return;
  if (count == 1) throw *first;
  throw slurm::SlurmError(first->query(), first->command(), first->line(),
                          fmt::format("{} (and {} more bad row(s))", first->what(), count - 1));
}

void collect_qos(slurm::SlurmClient& slurm, const Params& p, RecordOut& out, spdlog::logger* log) {
  Record r(kSacctmgrQosPayload);
  r[0] = pacific_date(p.now);
  r[1] = p.cluster;
  TableProblems problems;
  stream_table(
      slurm, qos_query(p.timeout), nullptr,
      [&](const Object& row) {
        std::string_view name;
        for (const auto& m : row)
          if (m.key == "Name") name = m.value.as_string();
        r[2] = slurm::derived_cluster(
            [&](std::string_view key) -> std::optional<std::string_view> {
              if (key == "Name") return name;
              return std::nullopt;
            },
            p.heterogeneous_cluster_v1, p.cluster, /*partition_from_qos=*/true);
        r[3] = row;
        out.emit(r);
      },
      problems, log);
  problems.raise();
}

namespace {

class SacctmgrQos : public Collector {
 public:
  explicit SacctmgrQos(OptionBinder& b) {
    add_slurm_timeout_option(b, timeout_s_,
                             "Seconds `sacctmgr show qos` (or its slurmrestd request) may run before it is killed and "
                             "the round fails.");
    add_slurm_backend_options(b, backend_);
  }
  std::vector<CollectorTask> tasks(const CollectorContext& context) override {
    slurm_.configure(backend_, slurm_timeout_ms(timeout_s_));
    if (slurm_.rest()) context.log->info("sacctmgr_qos: the QOS table from slurmrestd at {}", backend_.rest_url);
    return {{"sacctmgr_qos", &kSacctmgrQosPayload.get(), [this](const CollectorContext& ctx, RecordOut& out) {
               Params p{ctx.cluster, ctx.heterogeneous_cluster_v1, unix_time_now(),
                        slurm_timeout_ms(timeout_s_)};
               collect_qos(slurm_.client(), p, out, ctx.log.get());
             }}};
  }

 private:
  double timeout_s_ = 60;
  SlurmBackendOptions backend_;
  SlurmBackend slurm_;
};

const bool kSacctmgrQosRegistered = register_collector({
    "sacctmgr_qos",
    "The QOS table, one SacctmgrQosPayload record per QOS",
    "The QOS table of `sacctmgr show qos -P`, one SacctmgrQosPayload LOG record per QOS (daily by default).",
    86400,
    "sacctmgr_qos",
    [](OptionBinder& b) -> std::unique_ptr<Collector> { return std::make_unique<SacctmgrQos>(b); },
});
const bool kSacctmgrQosSchemasRegistered = register_schema(&kSacctmgrQosPayload);

}  // namespace
}  // namespace gcm::sacctmgr
