#include "sacct/sacct_records.h"

#include "core/schema.h"

namespace gcm::sacct {

namespace {

using K = SacctColumnKind;

struct Column {
  const char* name;
  K kind;
};

// gcm-reference.md §1.13: the columns of `sacct -o all` and the parser the reference applies to each.
const Column kColumns[] = {
    {"Account", K::String},
    {"AdminComment", K::String},
    {"AllocCPUS", K::MaybeInt},
    {"AllocNodes", K::MaybeInt},
    {"AllocTRES", K::String},
    {"AssocID", K::MaybeInt},
    {"AveCPU", K::MaybeFloat},
    {"AveCPUFreq", K::MaybeFloat},
    {"AveDiskRead", K::MaybeFloat},
    {"AveDiskWrite", K::MaybeFloat},
    {"AvePages", K::MaybeFloat},
    {"AveRSS", K::MaybeFloat},
    {"AveVMSize", K::MaybeFloat},
    {"BlockID", K::String},
    {"Cluster", K::String},
    {"Comment", K::String},
    {"Constraints", K::String},
    {"ConsumedEnergy", K::String},
    {"ConsumedEnergyRaw", K::String},
    {"Container", K::String},
    {"CPUTime", K::String},
    {"CPUTimeRAW", K::MaybeInt},
    {"DBIndex", K::String},
    {"DerivedExitCode", K::String},
    {"Elapsed", K::String},
    {"ElapsedRaw", K::MaybeInt},
    {"Eligible", K::Time},
    {"End", K::Time},
    {"ExitCode", K::String},
    {"Flags", K::String},
    {"GID", K::String},
    {"Group", K::String},
    {"JobID", K::String},
    {"JobIDRaw", K::String},
    {"JobName", K::String},
    {"Layout", K::String},
    {"MaxDiskRead", K::String},
    {"MaxDiskReadNode", K::String},
    {"MaxDiskReadTask", K::String},
    {"MaxDiskWrite", K::String},
    {"MaxDiskWriteNode", K::String},
    {"MaxDiskWriteTask", K::String},
    {"MaxPages", K::String},
    {"MaxPagesNode", K::String},
    {"MaxPagesTask", K::String},
    {"MaxRSS", K::String},
    {"MaxRSSNode", K::String},
    {"MaxRSSTask", K::String},
    {"MaxVMSize", K::String},
    {"MaxVMSizeNode", K::String},
    {"MaxVMSizeTask", K::String},
    {"McsLabel", K::String},
    {"MinCPU", K::String},
    {"MinCPUNode", K::String},
    {"MinCPUTask", K::String},
    {"NCPUS", K::MaybeInt},
    {"NNodes", K::MaybeInt},
    {"NodeList", K::NodeList},
    {"NTasks", K::MaybeInt},
    {"Partition", K::String},
    {"Priority", K::String},
    {"QOS", K::String},
    {"QOSRAW", K::String},
    {"Reason", K::String},
    {"ReqCPUFreq", K::String},
    {"ReqCPUFreqGov", K::String},
    {"ReqCPUFreqMax", K::String},
    {"ReqCPUFreqMin", K::String},
    {"ReqCPUS", K::String},
    {"ReqMem", K::String},
    {"ReqNodes", K::String},
    {"ReqTRES", K::String},
    {"Reservation", K::String},
    {"ReservationId", K::String},
    {"Reserved", K::String},
    {"ResvCPU", K::String},
    {"ResvCPURAW", K::String},
    {"Start", K::Time},
    {"State", K::String},
    {"Submit", K::Time},
    {"SubmitLine", K::String},
    {"Suspended", K::String},
    {"SystemComment", K::String},
    {"SystemCPU", K::String},
    {"Timelimit", K::String},
    {"TimelimitRaw", K::String},
    {"TotalCPU", K::String},
    {"TRESUsageInAve", K::String},
    {"TRESUsageInMax", K::String},
    {"TRESUsageInMaxNode", K::String},
    {"TRESUsageInMaxTask", K::String},
    {"TRESUsageInMin", K::String},
    {"TRESUsageInMinNode", K::String},
    {"TRESUsageInMinTask", K::String},
    {"TRESUsageInTot", K::String},
    {"TRESUsageOutAve", K::String},
    {"TRESUsageOutMax", K::String},
    {"TRESUsageOutMaxNode", K::String},
    {"TRESUsageOutMaxTask", K::String},
    {"TRESUsageOutMin", K::String},
    {"TRESUsageOutMinNode", K::String},
    {"TRESUsageOutMinTask", K::String},
    {"TRESUsageOutTot", K::String},
    {"UID", K::String},
    {"User", K::String},
    {"UserCPU", K::String},
    {"WCKey", K::String},
    {"WCKeyID", K::String},
    {"WorkDir", K::String},
};
constexpr size_t kColumnCount = sizeof(kColumns) / sizeof(kColumns[0]);

constinit const LazySchema kSacct{[] {
  Schema s;
  s.name = "Sacct";
  s.description = "One row of `sacct -P -o all` (a job or a job step) as sacct_running reports it.";
  s.metric_prefix = "sacct";
  s.data_type = DataType::Log;
  s.identifier = DataIdentifier::Generic;
  for (const Column& c : kColumns) {
    FieldSpec f;
    f.name = c.name;
    switch (c.kind) {
      case K::MaybeInt:
        f.type = FieldType::Int;
        f.help = "integer; null when sacct prints no number";
        break;
      case K::MaybeFloat:
        f.type = FieldType::Double;
        f.help = "number; null when sacct prints no number";
        break;
      case K::Time:
        f.help = "ISO 8601 with the host's offset, or Unknown/None/N/A as sacct prints it";
        break;
      case K::NodeList:
        f.type = FieldType::List;
        f.help = "node names, expanded; null when none";
        break;
      case K::String:
        f.help = "as sacct prints it";
        break;
    }
    if (f.name == "JobID" || f.name == "Cluster" || f.name == "Partition") f.role = FieldRole::Identity;
    s.fields.push_back(std::move(f));
  }
  s.fields.push_back({"derived_cluster", FieldType::String, FieldRole::Identity, "",
                      "<cluster>.<partition> with --heterogeneous-cluster-v1, else the cluster"});
  return s;
}};

constinit const LazySchema kSacctPayload{[] {
  Schema s;
  s.name = "SacctPayload";
  s.description = "One row of sacct -P output (any column set) as sacct_publish reports it.";
  s.metric_prefix = "sacct_payload";
  s.data_type = DataType::Log;
  s.identifier = DataIdentifier::Generic;
  s.fields = {
      {"time", FieldType::Int, FieldRole::Attribute, "seconds", "unix time sacct_publish started"},
      {"end_ds", FieldType::String, FieldRole::Attribute, "", "the job's End as a date (YYYY-MM-DD) in Los Angeles"},
      {"cluster", FieldType::String, FieldRole::Identity, "", "cluster name"},
      {"derived_cluster", FieldType::String, FieldRole::Identity, "",
       "<Cluster>.<partition> with --heterogeneous-cluster-v1, else the cluster"},
      {"sacct", FieldType::Object, FieldRole::Attribute, "",
       "the row: header name -> value (strings; Eligible/Start/Submit/End with the sacct time zone's offset)"},
      {"sc_host", FieldType::String, FieldRole::Attribute, "",
       "with --resolve-kubernetes-hosts: the Kubernetes node of the job's one Slurm node (its slurmd pod's node)"},
      {"sc_node_hosts", FieldType::String, FieldRole::Attribute, "",
       "with --resolve-kubernetes-hosts: JSON object {slurm node: Kubernetes node} over the NodeList, keys sorted"},
  };
  return s;
}};

const bool kSacctRecordsRegistered = register_schema(&kSacct) && register_schema(&kSacctPayload);

}  // namespace

const Schema& sacct_schema() { return kSacct; }
SacctColumnKind sacct_column_kind(size_t field) { return field < kColumnCount ? kColumns[field].kind : K::String; }
size_t sacct_derived_cluster_field() { return kColumnCount; }
const Schema& sacct_payload_schema() { return kSacctPayload; }

const std::vector<std::string>& terminal_job_state_names() {
  static const std::vector<std::string> names = {"boot_fail", "cancelled", "completed",     "deadline",
                                                 "failed",    "node_fail", "out_of_memory", "preempted",
                                                 "requeued",  "resizing",  "revoked",       "timeout"};
  return names;
}

std::string_view sacct_renamed_column(std::string_view field) {
  if (field == "Reserved") return "Planned";
  if (field == "ResvCPU") return "PlannedCPU";
  if (field == "ResvCPURAW") return "PlannedCPURAW";
  return "";
}

}  // namespace gcm::sacct
