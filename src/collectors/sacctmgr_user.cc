// gcm sacctmgr_user: `sacctmgr show user format=User -nP` for the user names, then per user
// `sacctmgr show user <user> withassoc format=User,DefaultAccount,Account,DefaultQOS,QOS -P`; one
// SacctmgrUserPayload {ds, cluster, derived_cluster, sacctmgr_user: {<header>: <value>, ...}} per association row.
// The keys are the column headers sacctmgr prints, as GCM keeps them: Slurm 22.05 heads two of the requested
// columns "Def Acct" and "Def QOS", so GCM's records there carry {User, Def Acct, Account, Def QOS, QOS}, and the
// tables and dashboards built on them expect those keys (renaming them here broke them).
#include <ctime>

#include <fmt/format.h>

#include "collectors/sacctmgr.h"
#include "core/clock.h"
#include "core/ascii.h"
#include "collectors/sacctmgr_table.h"
#include "collectors/slurm_backend.h"
#include "collectors/slurm_collectors.h"
#include "slurm/coerce.h"
#include "slurm/derived_cluster.h"

namespace gcm::sacctmgr {

constinit const LazySchema kSacctmgrUserPayload{[] {
  Schema s;
  s.name = "SacctmgrUserPayload";
  s.description = "One association of a Slurm user (user, default account, account, default QOS, QOS list).";
  s.metric_prefix = "sacctmgr_user";
  s.data_type = DataType::Log;
  s.identifier = DataIdentifier::Generic;
  s.fields = {
      {"ds", FieldType::String, FieldRole::Attribute, "", "collection date YYYY-MM-DD in America/Los_Angeles"},
      {"cluster", FieldType::String, FieldRole::Identity, "", "cluster name"},
      {"derived_cluster", FieldType::String, FieldRole::Identity, "", "the cluster (users have no partition)"},
      {"sacctmgr_user", FieldType::Object, FieldRole::Attribute, "",
       "one association as {header: value} with sacctmgr's headers as printed: {User, Def Acct, Account, Def QOS, "
       "QOS} on Slurm 22.05, DefaultAccount/DefaultQOS where sacctmgr prints those"},
  };
  return s;
}};

slurm::SlurmQuery user_list_query(std::chrono::milliseconds timeout) {
  return {"sacctmgr_users", {"sacctmgr", "show", "user", "format=User", "-nP"}, timeout};
}

slurm::SlurmQuery user_assoc_query(const std::string& user, std::chrono::milliseconds timeout) {
  return {"sacctmgr_user_assoc",
          {"sacctmgr", "show", "user", user, "withassoc", "format=User,DefaultAccount,Account,DefaultQOS,QOS", "-P"},
          timeout};
}

void collect_users(slurm::SlurmClient& slurm, const Params& p, RecordOut& out, spdlog::logger* log) {
  std::vector<std::string> users;
  slurm.stream_lines(user_list_query(p.timeout), [&](std::string_view line) {
    std::string_view u = ascii_trim(line);
    if (!u.empty()) users.emplace_back(u);
  });
  Record r(kSacctmgrUserPayload);
  r[0] = pacific_date(p.now);
  r[1] = p.cluster;
  r[2] = slurm::derived_cluster([](std::string_view) { return std::optional<std::string_view>(); },
                                p.heterogeneous_cluster_v1, p.cluster);
  TableProblems problems;
  for (const auto& user : users) {
    stream_table(
        slurm, user_assoc_query(user, p.timeout), nullptr,
        [&](const Object& row) {
          r[3] = row;
          out.emit(r);
        },
        problems, log);
  }
  problems.raise();
}

namespace {

class SacctmgrUser : public Collector {
 public:
  explicit SacctmgrUser(OptionBinder& b) {
    add_slurm_timeout_option(
        b, timeout_s_,
        "Seconds each sacctmgr command (or slurmrestd request) may run before it is killed and the "
        "round fails.");
    add_slurm_backend_options(b, backend_);
  }
  std::vector<CollectorTask> tasks(const CollectorContext& context) override {
    slurm_.configure(backend_, slurm_timeout_ms(timeout_s_));
    if (slurm_.rest())
      context.log->info("sacctmgr_user: users and their associations from slurmrestd at {}", backend_.rest_url);
    return {{"sacctmgr_user", &kSacctmgrUserPayload.get(), [this](const CollectorContext& ctx, RecordOut& out) {
               Params p{ctx.cluster, ctx.heterogeneous_cluster_v1, unix_time_now(),
                        slurm_timeout_ms(timeout_s_)};
               collect_users(slurm_.client(), p, out, ctx.log.get());
             }}};
  }

 private:
  double timeout_s_ = 60;
  SlurmBackendOptions backend_;
  SlurmBackend slurm_;
};

const bool kSacctmgrUserRegistered = register_collector({
    "sacctmgr_user",
    "Every Slurm user's associations, one record per association",
    "Every Slurm user's associations (`sacctmgr show user <user> withassoc`), one SacctmgrUserPayload LOG record "
    "per association (daily by default).",
    86400,
    "sacctmgr_user",
    [](OptionBinder& b) -> std::unique_ptr<Collector> { return std::make_unique<SacctmgrUser>(b); },
});
const bool kSacctmgrUserSchemasRegistered = register_schema(&kSacctmgrUserPayload);

}  // namespace
}  // namespace gcm::sacctmgr
