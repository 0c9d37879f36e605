// gcm scontrol_config: one ScontrolConfig record from `scontrol show config` (gcm-reference.md §1.18, Appendix B):
// the 221 known keys (12 of them integers), plus cluster and derived_cluster; other keys are dropped.
#include <string_view>
#include <unordered_map>

#include "collectors/slurm_collectors.h"
#include "slurm/coerce.h"
#include "slurm/derived_cluster.h"

namespace gcm {

// Named one by one: a using-directive here would reach the files compiled after this one in a unity batch.
using slurm::CliSlurmClient;
using slurm::derived_cluster;
using slurm::maybe_int;
using slurm::parse_config_line;
using slurm::SlurmClient;
using slurm::SlurmError;
using slurm::SlurmQuery;

namespace {

// maybe_int fields (non-numeric values such as "0 sec" are null).
const char* const kIntFields[] = {
    "SlurmUID",
    "SlurmdUID",
    "SlurmdPort",
    "Waittime",
    "PriorityWeightAge",
    "PriorityWeightFairShare",
    "PriorityWeightJobSize",
    "PriorityWeightPartition",
    "PriorityWeightQOS",
    "AccountingStoragePort",
    "JobCompPort",
    "PriorityWeightAssoc",
};
// Strings, in the reference's order.
const char* const kStringFields[] = {
    "ClusterName",
    "ControlMachine",
    "ControlAddr",
    "BackupController",
    "BackupAddr",
    "SlurmUser",
    "SlurmdUser",
    "AuthType",
    "AuthInfo",
    "CryptoType",
    "JobCredentialPrivateKey",
    "JobCredentialPublicCertificate",
    "StateSaveLocation",
    "SlurmdSpoolDir",
    "SlurmctldLogFile",
    "SlurmdLogFile",
    "SlurmctldDebug",
    "SlurmdDebug",
    "SlurmctldPidFile",
    "SlurmdPidFile",
    "SlurmctldPort",
    "SlurmctldTimeout",
    "SlurmdTimeout",
    "InactiveLimit",
    "MinJobAge",
    "KillWait",
    "SchedulerType",
    "SchedulerParameters",
    "SelectType",
    "SelectTypeParameters",
    "PriorityType",
    "PriorityDecayHalfLife",
    "PriorityCalcPeriod",
    "PriorityFavorSmall",
    "PriorityMaxAge",
    "PriorityUsageResetPeriod",
    "AccountingStorageType",
    "AccountingStorageHost",
    "AccountingStorageUser",
    "AccountingStorageLoc",
    "AccountingStorageEnforce",
    "JobAcctGatherType",
    "JobAcctGatherFrequency",
    "SlurmctldAddr",
    "FrontendName",
    "FrontendAddr",
    "NodeName",
    "NodeAddr",
    "PartitionName",
    "AccountingStorageBackupHost",
    "AccountingStorageExternalHost",
    "AccountingStorageParameters",
    "AccountingStorageTRES",
    "AccountingStoreFlags",
    "AcctGatherEnergyType",
    "AcctGatherFilesystemType",
    "AcctGatherInterconnectType",
    "AcctGatherNodeFreq",
    "AcctGatherProfileType",
    "AllowSpecResourcesUsage",
    "AuthAltTypes",
    "AuthAltParameters",
    "BatchStartTimeout",
    "BcastExclude",
    "BcastParameters",
    "BOOT_TIME",
    "BurstBufferType",
    "CliFilterPlugins",
    "CommunicationParameters",
    "CompleteWait",
    "CoreSpecPlugin",
    "CpuFreqDef",
    "CpuFreqGovernors",
    "CredType",
    "DebugFlags",
    "DefMemPerNode",
    "DependencyParameters",
    "DisableRootJobs",
    "EioTimeout",
    "EnforcePartLimits",
    "Epilog",
    "EpilogMsgTime",
    "EpilogSlurmctld",
    "ExtSensorsType",
    "ExtSensorsFreq",
    "FairShareDampeningFactor",
    "FederationParameters",
    "FirstJobId",
    "GetEnvTimeout",
    "GresTypes",
    "GpuFreqDef",
    "GroupUpdateForce",
    "GroupUpdateTime",
    "HASH_VAL",
    "HealthCheckInterval",
    "HealthCheckNodeState",
    "HealthCheckProgram",
    "InteractiveStepOptions",
    "JobAcctGatherParams",
    "JobCompHost",
    "JobCompLoc",
    "JobCompParams",
    "JobCompType",
    "JobCompUser",
    "JobContainerType",
    "JobDefaults",
    "JobFileAppend",
    "JobRequeue",
    "JobSubmitPlugins",
    "KillOnBadExit",
    "LaunchParameters",
    "Licenses",
    "LogTimeFormat",
    "MailDomain",
    "MailProg",
    "MaxArraySize",
    "MaxBatchRequeue",
    "MaxDBDMsgs",
    "MaxJobCount",
    "MaxJobId",
    "MaxMemPerNode",
    "MaxNodeCount",
    "MaxStepCount",
    "MaxTasksPerNode",
    "MCSPlugin",
    "MCSParameters",
    "MessageTimeout",
    "MpiDefault",
    "MpiParams",
    "NEXT_JOB_ID",
    "NodeFeaturesPlugins",
    "OverTimeLimit",
    "PluginDir",
    "PlugStackConfig",
    "PowerParameters",
    "PowerPlugin",
    "PreemptMode",
    "PreemptParameters",
    "PreemptType",
    "PreemptExemptTime",
    "PrEpParameters",
    "PrEpPlugins",
    "PriorityParameters",
    "PrioritySiteFactorParameters",
    "PrioritySiteFactorPlugin",
    "PriorityFlags",
    "PriorityWeightTRES",
    "PrivateData",
    "ProctrackType",
    "Prolog",
    "PrologEpilogTimeout",
    "PrologSlurmctld",
    "PrologFlags",
    "PropagatePrioProcess",
    "PropagateResourceLimits",
    "PropagateResourceLimitsExcept",
    "RebootProgram",
    "ReconfigFlags",
    "RequeueExit",
    "RequeueExitHold",
    "ResumeFailProgram",
    "ResumeProgram",
    "ResumeRate",
    "ResumeTimeout",
    "ResvEpilog",
    "ResvOverRun",
    "ResvProlog",
    "ReturnToService",
    "RoutePlugin",
    "SchedulerTimeSlice",
    "ScronParameters",
    "SlurmctldSyslogDebug",
    "SlurmctldPrimaryOffProg",
    "SlurmctldPrimaryOnProg",
    "SlurmctldParameters",
    "SlurmdParameters",
    "SlurmdSyslogDebug",
    "SlurmSchedLogFile",
    "SlurmSchedLogLevel",
    "SLURM_CONF",
    "SLURM_VERSION",
    "SrunEpilog",
    "SrunPortRange",
    "SrunProlog",
    "SuspendExcNodes",
    "SuspendExcParts",
    "SuspendExcStates",
    "SuspendProgram",
    "SuspendRate",
    "SuspendTime",
    "SuspendTimeout",
    "SwitchParameters",
    "SwitchType",
    "TaskEpilog",
    "TaskPlugin",
    "TaskPluginParam",
    "TaskProlog",
    "TCPTimeout",
    "TmpFS",
    "TopologyParam",
    "TopologyPlugin",
    "TrackWCKey",
    "TreeWidth",
    "UsePam",
    "UnkillableStepProgram",
    "UnkillableStepTimeout",
    "VSizeFactor",
    "WaitTime",
    "X11Parameters",
};

constinit const LazySchema kScontrolConfig{[] {
  Schema s;
  s.name = "ScontrolConfig";
  s.description = "Slurm's configuration, from `scontrol show config` (one record per round).";
  s.metric_prefix = "slurm_config";
  s.data_type = DataType::Log;
  s.identifier = DataIdentifier::Generic;
  s.fields.push_back({"cluster", FieldType::String, FieldRole::Identity, "", "cluster name"});
  s.fields.push_back({"derived_cluster", FieldType::String, FieldRole::Identity, "",
                      "<cluster>.<PartitionName> with --heterogeneous-cluster-v1 when the config has PartitionName, "
                      "else the cluster"});
  for (const char* f : kIntFields) {
    std::string_view name(f);
    // The priority weights are the measurements worth graphing; ports and uids are attributes.
    FieldRole role = name.starts_with("PriorityWeight") ? FieldRole::Gauge : FieldRole::Attribute;
    s.fields.push_back({f, FieldType::Int, role, "", std::string(f) + " (integer; null when not a number)"});
  }
  for (const char* f : kStringFields) s.fields.push_back({f, FieldType::String, FieldRole::Attribute, "", f});
  snake_case_metric_names(s);
  return s;
}};

class ScontrolConfigCollector : public Collector {
 public:
  explicit ScontrolConfigCollector(OptionBinder& b) { add_slurm_timeout_option(b, timeout_s_); }

  std::vector<CollectorTask> tasks(const CollectorContext&) override {
    opts_.timeout = slurm_timeout_ms(timeout_s_);
    return {{"config", &kScontrolConfig.get(),
             [this](const CollectorContext& c, RecordOut& o) { collect_scontrol_config(client_, c, opts_, o); }}};
  }

 private:
  double timeout_s_ = 60;
  SlurmSnapshotOptions opts_;
  CliSlurmClient client_;
};

const bool kScontrolConfigRegistered = register_collector({
    "scontrol_config",
    "Slurm's configuration, one ScontrolConfig record per round",
    "Slurm's configuration (LOG): one ScontrolConfig record per round from `scontrol show config`, with the 221 "
    "keys GCM knows (ClusterName, SlurmctldPort, SchedulerType, PriorityWeight*, ...).",
    86400,
    "scontrol_config",
    [](OptionBinder& b) { return std::make_unique<ScontrolConfigCollector>(b); },
});
const bool kScontrolConfigSchemasRegistered = register_schema(&kScontrolConfig);

}  // namespace

const std::vector<std::string>& scontrol_config_argv() {
  static const std::vector<std::string> argv = {"scontrol", "show", "config"};
  return argv;
}

const Schema& scontrol_config_schema() { return kScontrolConfig; }

void collect_scontrol_config(SlurmClient& client, const CollectorContext& ctx, const SlurmSnapshotOptions& o,
                             RecordOut& out) {
  static const std::unordered_map<std::string_view, size_t> index = [] {
    std::unordered_map<std::string_view, size_t> m;
    for (size_t i = 2; i < kScontrolConfig->fields.size(); ++i) m.emplace(kScontrolConfig->fields[i].name, i);
    return m;
  }();
  SlurmQuery q;
  q.name = "scontrol_config";
  q.argv = scontrol_config_argv();
  q.timeout = o.timeout;
  Record r(kScontrolConfig);
  size_t pairs = 0;
  client.stream_lines(q, [&](std::string_view line) {
    auto kv = parse_config_line(line);
    if (!kv) return;
    ++pairs;
    auto it = index.find(kv->key);
    if (it == index.end()) return;  // keys the schema does not know are dropped, as in the reference
    size_t f = it->second;
    if (kScontrolConfig->fields[f].type == FieldType::Int) {
      auto v = maybe_int(kv->value);
      r[f] = v ? Value(*v) : Value();
    } else {
      r[f] = Value(kv->value);  // a later repeat of a key wins, as in the reference's dict
    }
  });
  if (pairs == 0)
    throw SlurmError(q.name, "scontrol show config", 0, "`scontrol show config` printed no 'Key = Value' line");
  r[0] = ctx.cluster;
  const Value& partition = r.at("PartitionName");
  r[1] = derived_cluster(
      [&](std::string_view key) -> std::optional<std::string_view> {
        if (key == "PartitionName" && partition.is_string()) return std::string_view(partition.as_string());
        return std::nullopt;
      },
      ctx.heterogeneous_cluster_v1, ctx.cluster);
  out.emit(r);
}

}  // namespace gcm
