// gcm slurm_job_monitor: every round, a NodeData record per `sinfo --all -N -o %all` row (identifier NODE) and a
// JobData record per job of `squeue --all -O ...` (identifier JOB). gcm-reference.md §1.5, §1.8, §1.9, §1.12.
#include <ctime>
#include <optional>

#include <fmt/format.h>

#include "cli/option_binder.h"
#include "core/clock.h"
#include "collectors/slurm_backend.h"
#include "collectors/slurm_collectors.h"
#include "core/subprocess.h"
#include "slurm/coerce.h"
#include "slurm/derived_cluster.h"
#include "slurm/gres.h"
#include "slurm/hostlist.h"
#include "slurm/job_state.h"
#include "slurm/memory.h"
#include "slurm/sinfo_json.h"
#include "slurm/timestamp.h"
#include "slurm/tres.h"
#include "slurm/version.h"

namespace gcm {

// Named one by one: a using-directive here would reach the files compiled after this one in a unity batch.
using slurm::CpuStates;
using slurm::DelimitedError;
using slurm::DelimitedHeader;
using slurm::DelimitedOptions;
using slurm::DelimitedParser;
using slurm::DelimitedRow;
using slurm::derived_cluster;
using slurm::for_each_line;
using slurm::format_iso;
using slurm::gres_count;
using slurm::gres_detail_gpu_indices;
using slurm::gres_gpu_count;
using slurm::gres_or_tres_gpu_count;
using slurm::in_zone;
using slurm::is_pending_on_resources;
using slurm::is_unset_time;
using slurm::maybe_float;
using slurm::maybe_int;
using slurm::memory_to_bytes;
using slurm::nodelist_or_null;
using slurm::parse_cpu_states;
using slurm::parse_gres_list;
using slurm::parse_sinfo_json;
using slurm::parse_slurm_version;
using slurm::parse_timestamp;
using slurm::ParseError;
using slurm::RowLengthPolicy;
using slurm::SinfoJsonNode;
using slurm::SlurmClient;
using slurm::SlurmError;
using slurm::SlurmQuery;
using slurm::split_fields;
using slurm::strict_int;
using slurm::tres_value;

namespace {

const FieldRole kId = FieldRole::Identity;
const FieldRole kGauge = FieldRole::Gauge;
const FieldRole kAttr = FieldRole::Attribute;
const FieldType kStr = FieldType::String;
const FieldType kInt = FieldType::Int;

// NodeData field positions.
enum NodeField : size_t {
  kNumRows,
  kNodeTime,
  kNodeCluster,
  kNodeDerived,
  kNodeName,
  kNodePartition,
  kCpusAllocated,
  kCpusIdle,
  kCpusOther,
  kCpusTotal,
  kFreeMem,
  kMemory,
  kNumGpus,
  kNodeUser,
  kReason,
  kTimestamp,
  kActiveFeatures,
  kNodeState,
  kNodeReservation,
  kNodeFieldCount
};

constinit const LazySchema kNodeData{[] {
  Schema s;
  s.name = "NodeData";
  s.description = "One row of `sinfo --all -N -o %all`: a node in one partition.";
  s.metric_prefix = "slurm_node";
  s.data_type = DataType::Log;
  s.identifier = DataIdentifier::Node;
  s.fields = {
      {"num_rows", kInt, kAttr, "", "number of rows of this sinfo output"},
      {"collection_unixtime", kInt, kAttr, "seconds", "unix time of the collection round"},
      {"cluster", kStr, kId, "", "cluster name"},
      {"derived_cluster", kStr, kId, "", "<cluster>.<partition> with --heterogeneous-cluster-v1, else the cluster"},
      {"NODE_NAME", kStr, kId, "", "node name (NODELIST)"},
      {"PARTITION", kStr, kId, "", "partition (first PARTITION column; the default partition ends with '*')"},
      {"CPUS_ALLOCATED", kInt, kGauge, "", "allocated CPUs (CPUS(A/I/O/T))"},
      {"CPUS_IDLE", kInt, kGauge, "", "idle CPUs"},
      {"CPUS_OTHER", kInt, kGauge, "", "CPUs neither allocated nor idle (down, drained)"},
      {"CPUS_TOTAL", kInt, kGauge, "", "CPUs"},
      {"FREE_MEM", kInt, kGauge, "", "free memory in MB (null when sinfo prints N/A)"},
      {"MEMORY", kInt, kGauge, "", "configured memory in MB"},
      {"NUM_GPUS", kInt, kGauge, "", "GPUs in the node's GRES"},
      {"USER", kStr, kAttr, "", "user who set the reason (first USER column)"},
      {"REASON", kStr, kAttr, "", "reason the node is down/drained, or 'none'"},
      {"TIMESTAMP", kStr, kAttr, "", "when the reason was set, or Unknown"},
      {"ACTIVE_FEATURES", kStr, kAttr, "", "active node features"},
      {"STATE", kStr, kAttr, "", "node state, long form with flags (last STATE column, e.g. drained*)"},
      {"RESERVATION", kStr, kAttr, "", "reservation the node is in"},
  };
  // gcm_slurm_node_info: which nodes are drained or down, by whom and why (the dashboards' "drained by gcm" panel).
  s.info_labels = {"STATE", "REASON", "USER", "TIMESTAMP"};
  snake_case_metric_names(s);
  return s;
}};

enum JobField : size_t {
  kJobTime,
  kJobCluster,
  kJobDerived,
  kPendingResources,
  kGpusRequested,
  kMinCpus,
  kJobId,
  kJobIdRaw,
  kName,
  kTimeLimit,
  kMinMemory,
  kCommand,
  kPriority,
  kJobState,
  kJobUser,
  kCpus,
  kNodes,
  kTimeLeft,
  kTimeUsed,
  kNodelist,
  kDependency,
  kExcNodes,
  kStartTime,
  kSubmitTime,
  kEligibleTime,
  kAccrueTime,
  kPendingTime,
  kComment,
  kJobPartition,
  kAccount,
  kQos,
  kJobReason,
  kTresGpus,
  kTresCpu,
  kTresMem,
  kTresNode,
  kTresBilling,
  kJobReservation,
  kRequeue,
  kFeature,
  kRestartCnt,
  kSchedNodes,
  kLastSchedEval,
  kGresGpuIndices,
  kJobFieldCount
};

constinit const LazySchema kJobData{[] {
  Schema s;
  s.name = "JobData";
  s.description = "One job of `squeue --all -O ...` (pending and running jobs).";
  s.metric_prefix = "slurm_job";
  s.data_type = DataType::Log;
  s.identifier = DataIdentifier::Job;
  const FieldType kList = FieldType::List;
  s.fields = {
      {"collection_unixtime", kInt, kAttr, "seconds", "unix time of the collection round"},
      {"cluster", kStr, kId, "", "cluster name"},
      {"derived_cluster", kStr, kId, "", "<cluster>.<partition> with --heterogeneous-cluster-v1, else the cluster"},
      {"PENDING_RESOURCES", kStr, kAttr, "", "\"True\" when PENDING for Resources or Priority, else \"False\""},
      {"GPUS_REQUESTED", kInt, kGauge, "", "GPUs per node requested (TRES-PER-NODE)"},
      {"MIN_CPUS", kInt, kGauge, "", "minimum CPUs per node (MINCPUS)"},
      {"JOBID", kStr, kId, "", "job id, array form <job>_<task> (JOBARRAYID)"},
      {"JOBID_RAW", kStr, kAttr, "", "numeric job id (JOBID)"},
      {"NAME", kStr, kAttr, "", "job name"},
      {"TIME_LIMIT", kStr, kAttr, "", "time limit as squeue prints it"},
      {"MIN_MEMORY", kInt, kGauge, "bytes",
       "minimum memory per node in decimal bytes (MINMEMORY; null when none; MB before GCM's 2026 version)"},
      {"COMMAND", kStr, kAttr, "", "batch script or command"},
      {"PRIORITY", FieldType::Double, kGauge, "", "priority (a fraction of 2^32)"},
      {"STATE", kStr, kAttr, "", "job state (PENDING, RUNNING, ...)"},
      {"USER", kStr, kAttr, "", "user name (USERNAME)"},
      {"CPUS", kInt, kGauge, "", "CPUs requested or allocated (NUMCPUS)"},
      {"NODES", kInt, kGauge, "", "nodes requested or allocated (NUMNODES)"},
      {"TIME_LEFT", kStr, kAttr, "", "time left"},
      {"TIME_USED", kStr, kAttr, "", "time used"},
      {"NODELIST", kList, kAttr, "", "allocated nodes, expanded; null when none"},
      {"DEPENDENCY", kStr, kAttr, "", "dependencies"},
      {"EXC_NODES", kList, kAttr, "", "excluded nodes, expanded; null when none (EXCNODES)"},
      {"START_TIME", kStr, kAttr, "", "start time (ISO 8601 with offset) or N/A"},
      {"SUBMIT_TIME", kStr, kAttr, "", "submit time"},
      {"ELIGIBLE_TIME", kStr, kAttr, "", "eligible time"},
      {"ACCRUE_TIME", kStr, kAttr, "", "time priority started to accrue"},
      {"PENDING_TIME", kInt, kGauge, "seconds", "seconds pending (PENDINGTIME)"},
      {"COMMENT", kStr, kAttr, "", "comment"},
      {"PARTITION", kStr, kAttr, "", "partition"},
      {"ACCOUNT", kStr, kAttr, "", "account"},
      {"QOS", kStr, kAttr, "", "QOS"},
      {"REASON", kStr, kAttr, "", "why the job is pending (None when running)"},
      {"TRES_GPUS_ALLOCATED", kInt, kGauge, "", "gres/gpu of TRES-ALLOC"},
      {"TRES_CPU_ALLOCATED", kInt, kGauge, "", "cpu of TRES-ALLOC"},
      {"TRES_MEM_ALLOCATED", kInt, kGauge, "", "mem of TRES-ALLOC in MB"},
      {"TRES_NODE_ALLOCATED", kInt, kGauge, "", "node of TRES-ALLOC"},
      {"TRES_BILLING_ALLOCATED", kInt, kGauge, "", "billing of TRES-ALLOC"},
      {"RESERVATION", kStr, kAttr, "", "reservation"},
      {"REQUEUE", kStr, kAttr, "", "whether the job may be requeued"},
      {"FEATURE", kStr, kAttr, "", "required features"},
      {"RESTARTCNT", kInt, kGauge, "", "restart count"},
      {"SCHEDNODES", kList, kAttr, "", "nodes the scheduler expects to use, expanded; null when none"},
      {"LAST_SCHED_EVAL", kStr, kAttr, "", "when the scheduler last evaluated the job (LASTSCHEDEVAL, as START_TIME)"},
      {"GRES_GPU_INDICES", kStr, kAttr, "",
       "GPU indices of a one-node job (\"0,1,2,3\"); only the REST backend knows them, null from the CLI"},
  };
  // gcm_slurm_job_info: jobs by state and pending reason, per user, partition, account and QOS.
  s.info_labels = {"STATE", "REASON", "USER", "PARTITION", "ACCOUNT", "QOS"};
  snake_case_metric_names(s);
  return s;
}};

// squeue column positions in the argv.
enum SqueueColumn : size_t {
  cTresPerNode,
  cMinCpus,
  cJobArrayId,
  cJobId,
  cName,
  cTimeLimit,
  cMinMemory,
  cCommand,
  cPriority,
  cState,
  cUserName,
  cNumCpus,
  cNumNodes,
  cTimeLeft,
  cTimeUsed,
  cNodelist,
  cDependency,
  cExcNodes,
  cStartTime,
  cSubmitTime,
  cEligibleTime,
  cAccrueTime,
  cPendingTime,
  cComment,
  cPartition,
  cAccount,
  cQos,
  cReason,
  cTresAlloc,
  cReservation,
  cRequeue,
  cFeature,
  cRestartCnt,
  cSchedNodes,
  cLastSchedEval,
  cGresDetail,  // not an squeue column: the REST back end's gres_detail, after the 35 (slurm/rest_render.h)
  cColumnCount
};

const std::vector<std::string> kSqueueColumns = {
    "TRES-PER-NODE", "MINCPUS",     "JOBARRAYID", "JOBID",     "NAME",       "TIMELIMIT",  "MINMEMORY",
    "COMMAND",       "PRIORITY",    "STATE",      "USERNAME",  "NUMCPUS",    "NUMNODES",   "TIMELEFT",
    "TIMEUSED",      "NODELIST",    "DEPENDENCY", "EXCNODES",  "STARTTIME",  "SUBMITTIME", "ELIGIBLETIME",
    "ACCRUETIME",    "PENDINGTIME", "COMMENT",    "PARTITION", "ACCOUNT",    "QOS",        "REASON",
    "TRES-ALLOC",    "RESERVATION", "REQUEUE",    "FEATURE",   "RESTARTCNT", "SCHEDNODES", "LASTSCHEDEVAL"};

Value int_or_null(std::optional<int64_t> v) { return v ? Value(*v) : Value(); }

// The reference's nodelist(...)[0]: the expanded names, or null.
void set_nodelist(Value& field, std::string_view text) {
  auto names = nodelist_or_null(text);
  if (!names) {
    field = Value();
    return;
  }
  List l;
  l.reserve(names->size());
  for (auto& n : *names) l.emplace_back(std::move(n));
  field = Value(std::move(l));
}

// NUM_GPUS: the reference's parse_gres on the whole GRES value. When that fails because the list starts with
// another resource ("nic:1,gpu:8", "nic:1"), the GPUs of the list (0 when none) instead of aborting the round
// (a difference from the reference, which raised).
int64_t node_gpus(std::string_view gres) {
  try {
    return gres_gpu_count(gres);
  } catch (const ParseError&) {
    return gres_count(parse_gres_list(gres), "gpu");  // a malformed list still throws, naming the value
  }
}

std::string derived_for_partition(const CollectorContext& ctx, std::string_view partition) {
  return derived_cluster(
      [&](std::string_view key) -> std::optional<std::string_view> {
        if (key == "PARTITION") return partition;
        return std::nullopt;
      },
      ctx.heterogeneous_cluster_v1, ctx.cluster);
}

SlurmQuery make_query(const char* name, const std::vector<std::string>& argv, const SlurmSnapshotOptions& o) {
  SlurmQuery q;
  q.name = name;
  q.argv = argv;
  q.timeout = o.timeout;
  return q;
}

int64_t collection_time(const SlurmSnapshotOptions& o) {
  return o.collection_unixtime ? o.collection_unixtime : unix_time_now();
}

// The line number of a bad line travels to the SlurmError.
struct BadLine {
  size_t line;
  std::string message;
};

// The JSON node source where the Slurm version prints the layout GCM reads (23.11+); the text elsewhere.
constexpr std::pair<int, int> kSinfoJsonRowsSince{23, 11};

class SlurmJobMonitor : public Collector {
 public:
  explicit SlurmJobMonitor(OptionBinder& b) {
    add_slurm_timeout_option(b, timeout_s_);
    add_slurm_backend_options(b, backend_);
    b.option("--sinfo-format", "sinfo_format", sinfo_format_,
             "Node source: `text` reads `sinfo --all -N -o %all` (GCM's 2025 source, every Slurm version), `json` "
             "reads `sinfo --all -N --json` (GCM's 2026 source; Slurm 22.05's node layout is read too), `auto` "
             "uses json from Slurm 23.11 on (`sinfo -V`, asked once) and text before, and json with "
             "--slurm-backend rest (slurmrestd's nodes).")
        ->capture_default_str()
        ->check(CLI::IsMember({"auto", "text", "json"}));
  }

  std::vector<CollectorTask> tasks(const CollectorContext& ctx) override {
    opts_.timeout = slurm_timeout_ms(timeout_s_);
    opts_.zone = TimeZone::host();
    slurm_.configure(backend_, opts_.timeout);
    opts_.squeue_gres_detail = slurm_.rest();
    if (slurm_.rest())
      ctx.log->info("slurm_job_monitor: nodes and jobs from slurmrestd at {}; other queries run Slurm's commands",
                    backend_.rest_url);
    return {
        {"nodes", &kNodeData.get(),
         [this](const CollectorContext& c, RecordOut& o) {
           SlurmSnapshotOptions opts = opts_;
           opts.sinfo_format = node_source(c);
           size_t n = collect_slurm_nodes(slurm_.client(), c, opts, o);
           c.log->debug("slurm_job_monitor: {} node rows", n);
         }},
        {"jobs", &kJobData.get(),
         [this](const CollectorContext& c, RecordOut& o) {
           size_t n = collect_slurm_jobs(slurm_.client(), c, opts_, o);
           c.log->debug("slurm_job_monitor: {} jobs", n);
         }},
    };
  }

 private:
  // `auto` asks `sinfo -V` until it answers once; while it does not, the text source (every version has it).
  SinfoFormat node_source(const CollectorContext& c) {
    if (sinfo_format_ != "auto") return sinfo_format_ == "json" ? SinfoFormat::Json : SinfoFormat::Text;
    if (slurm_.rest()) return SinfoFormat::Json;  // slurmrestd's nodes are the JSON node records
    if (!auto_format_) {
      try {
        auto version = parse_slurm_version(slurm_.client().output(make_query("sinfo_version", {"sinfo", "-V"}, opts_)));
        auto_format_ = version >= kSinfoJsonRowsSince ? SinfoFormat::Json : SinfoFormat::Text;
        c.log->debug("slurm_job_monitor: Slurm {}.{:02}: nodes from sinfo {}", version.first, version.second,
                     *auto_format_ == SinfoFormat::Json ? "--json" : "-o %all");
      } catch (const std::exception& e) {
        c.log->warn("slurm_job_monitor: the Slurm version is unknown (`sinfo -V`: {}); nodes from `sinfo -o %all`",
                    e.what());
        return SinfoFormat::Text;
      }
    }
    return *auto_format_;
  }

  double timeout_s_ = 60;
  std::string sinfo_format_ = "auto";
  std::optional<SinfoFormat> auto_format_;
  SlurmSnapshotOptions opts_;
  SlurmBackendOptions backend_;
  SlurmBackend slurm_;
};

const bool kSlurmJobMonitorRegistered = register_collector({
    "slurm_job_monitor",
    "Snapshots of Slurm's nodes and jobs (NodeData and JobData)",
    "Snapshots of Slurm's nodes and jobs (LOG): a NodeData record per row of `sinfo --all -N -o %all` (identifier "
    "NODE) and a JobData record per pending or running job of `squeue --all -O ...` (identifier JOB).",
    60,
    "slurm_job_monitor",
    [](OptionBinder& b) { return std::make_unique<SlurmJobMonitor>(b); },
});
const bool kSlurmJobMonitorSchemasRegistered = register_schema(&kNodeData) && register_schema(&kJobData);

}  // namespace

const std::vector<std::string>& sinfo_all_nodes_argv() {
  static const std::vector<std::string> argv = {"sinfo", "--all", "-N", "-o", "%all"};
  return argv;
}

const std::vector<std::string>& sinfo_all_nodes_json_argv() {
  static const std::vector<std::string> argv = {"sinfo", "--all", "-N", "--json"};
  return argv;
}

const std::vector<std::string>& squeue_jobs_argv() {
  static const std::vector<std::string> argv = [] {
    std::string format;
    for (const auto& c : kSqueueColumns) {
      if (!format.empty()) format += ',';
      format += c + ":|#";
    }
    return std::vector<std::string>{"squeue", "--all", "-O", format, "--noheader"};
  }();
  return argv;
}

void snake_case_metric_names(Schema& s) {
  for (auto& f : s.fields) {
    if (f.role != FieldRole::Gauge && f.role != FieldRole::Counter) continue;
    std::string out;
    for (size_t i = 0; i < f.name.size(); ++i) {
      char c = f.name[i];
      bool upper = c >= 'A' && c <= 'Z';
      if (upper && i > 0) {
        char p = f.name[i - 1];
        if ((p >= 'a' && p <= 'z') || (p >= '0' && p <= '9')) out.push_back('_');
      }
      out.push_back(upper ? static_cast<char>(c - 'A' + 'a') : c);
    }
    f.metric_name = s.metric_prefix + "_" + out;
  }
}

const std::vector<std::string>& squeue_columns() { return kSqueueColumns; }
const Schema& node_data_schema() { return kNodeData; }
const Schema& job_data_schema() { return kJobData; }

namespace {

size_t collect_nodes_from_text(SlurmClient& client, const CollectorContext& ctx, const SlurmSnapshotOptions& o,
                               RecordOut& out) {
  SlurmQuery q = make_query("sinfo_all_nodes", sinfo_all_nodes_argv(), o);
  const int64_t now = collection_time(o);
  std::string text = client.output(q);

  // Columns as the reference reads them (§1.8): rows with extra fields keep the header's (sinfo ends some rows with
  // a '|'); a short row is an error naming its line (the reference skipped it with a warning).
  DelimitedOptions dopts;
  dopts.length_mismatch = RowLengthPolicy::DropExtraSkipShort;
  auto feed_all = [&](const std::function<void(const DelimitedParser&, const DelimitedRow&)>& on_row) {
    DelimitedParser parser(dopts);
    bool header_checked = false;
    std::vector<std::string_view> fields;
    for_each_line(text, [&](std::string_view line) {
      size_t skipped = parser.skipped_rows();
      const DelimitedRow* row = parser.feed(line);
      if (parser.skipped_rows() != skipped) {
        split_fields(line, "|", fields);
        throw BadLine{parser.lines(),
                      fmt::format("{} field(s) where the header has {}", fields.size(), parser.header().size())};
      }
      if (!header_checked && parser.has_header()) {
        if (!parser.header().first("NODELIST"))
          throw BadLine{parser.lines(), "not `sinfo -o %all` output: the header has no NODELIST column"};
        header_checked = true;
      }
      if (row) on_row(parser, *row);
    });
    return parser.rows();
  };

  try {
    // Pass 1: validate and count (num_rows is in every record). Pass 2: write.
    size_t rows = feed_all([](const DelimitedParser&, const DelimitedRow&) {});
    Record r(kNodeData);
    bool columns_known = false;
    std::optional<size_t> col[kNodeFieldCount];
    feed_all([&](const DelimitedParser& p, const DelimitedRow& row) {
      if (!columns_known) {
        const DelimitedHeader& h = p.header();
        col[kNodeName] = h.reference_index("NODELIST");
        col[kNodePartition] = h.reference_index("PARTITION");
        col[kCpusAllocated] = h.reference_index("CPUS(A/I/O/T)");
        col[kFreeMem] = h.reference_index("FREE_MEM");
        col[kMemory] = h.reference_index("MEMORY");
        col[kNumGpus] = h.reference_index("GRES");
        col[kNodeUser] = h.reference_index("USER");
        col[kReason] = h.reference_index("REASON");
        col[kTimestamp] = h.reference_index("TIMESTAMP");
        col[kActiveFeatures] = h.reference_index("ACTIVE_FEATURES");
        col[kNodeState] = h.reference_index("STATE");
        col[kNodeReservation] = h.reference_index("RESERVATION");
        for (size_t f : {kNodePartition, kCpusAllocated, kFreeMem, kMemory, kNumGpus, kNodeUser, kReason, kTimestamp,
                         kActiveFeatures, kNodeState, kNodeReservation})
          if (!col[f]) ctx.log->warn("sinfo -o %all: no column for {}; it is null", kNodeData->fields[f].name);
        columns_known = true;
      }
      try {
        auto str = [&](size_t f) {
          if (col[f])
            r[f].set_string(row[*col[f]]);
          else
            r[f] = Value();
        };
        r[kNumRows] = static_cast<int64_t>(rows);
        r[kNodeTime] = now;
        r[kNodeCluster].set_string(ctx.cluster);
        str(kNodeName);
        str(kNodePartition);
        r[kNodeDerived] = derived_for_partition(ctx, col[kNodePartition] ? row[*col[kNodePartition]] : "");
        if (col[kCpusAllocated]) {
          CpuStates c = parse_cpu_states(row[*col[kCpusAllocated]]);
          r[kCpusAllocated] = c.allocated;
          r[kCpusIdle] = c.idle;
          r[kCpusOther] = c.other;
          r[kCpusTotal] = c.total;
        } else {
          r[kCpusAllocated] = r[kCpusIdle] = r[kCpusOther] = r[kCpusTotal] = Value();
        }
        r[kFreeMem] = col[kFreeMem] ? int_or_null(maybe_int(row[*col[kFreeMem]])) : Value();
        r[kMemory] = col[kMemory] ? int_or_null(maybe_int(row[*col[kMemory]])) : Value();
        r[kNumGpus] = col[kNumGpus] ? Value(node_gpus(row[*col[kNumGpus]])) : Value();
        for (size_t f : {kNodeUser, kReason, kTimestamp, kActiveFeatures, kNodeState, kNodeReservation}) str(f);
      } catch (const std::exception& e) {
        throw BadLine{row.line_number, e.what()};
      }
      out.emit(r);
    });
    return rows;
  } catch (const BadLine& b) {
    throw SlurmError(q.name, command_line(q.argv), b.line, b.message);
  } catch (const DelimitedError& e) {
    throw SlurmError(q.name, command_line(q.argv), e.line(), e.reason());
  }
}

// The same NodeData from the JSON: the fields as the text form has them, except PARTITION (no '*' on the default
// partition: the JSON does not say which it is) and TIMESTAMP (UTC, where the text form has the host's local time).
size_t collect_nodes_from_json(SlurmClient& client, const CollectorContext& ctx, const SlurmSnapshotOptions& o,
                               RecordOut& out) {
  SlurmQuery q = make_query("sinfo_all_nodes_json", sinfo_all_nodes_json_argv(), o);
  const int64_t now = collection_time(o);
  std::string text = client.output(q);
  std::vector<SinfoJsonNode> nodes;
  try {
    nodes = parse_sinfo_json(text);
  } catch (const ParseError& e) {
    throw SlurmError(q.name, command_line(q.argv), 0, fmt::format("`{}`: {}", command_line(q.argv), e.what()));
  }
  Record r(kNodeData);
  for (const SinfoJsonNode& n : nodes) {
    r[kNumRows] = static_cast<int64_t>(nodes.size());
    r[kNodeTime] = now;
    r[kNodeCluster].set_string(ctx.cluster);
    r[kNodeName].set_string(n.name);
    r[kNodePartition].set_string(n.partition);
    r[kNodeDerived] = derived_for_partition(ctx, n.partition);
    r[kCpusAllocated] = n.cpus_allocated;
    r[kCpusIdle] = n.cpus_idle;
    r[kCpusOther] = n.cpus_other;
    r[kCpusTotal] = n.cpus_total;
    r[kFreeMem] = int_or_null(n.free_mem);
    r[kMemory] = n.memory;
    try {
      r[kNumGpus] = node_gpus(n.gres.empty() ? "(null)" : n.gres);
    } catch (const ParseError& e) {
      throw SlurmError(q.name, command_line(q.argv), 0,
                       fmt::format("`{}`: node {}: {}", command_line(q.argv), n.name, e.what()));
    }
    r[kNodeUser].set_string(n.user);
    r[kReason].set_string(n.reason);
    r[kTimestamp].set_string(n.timestamp);
    // As sinfo -o %all prints a node without features.
    r[kActiveFeatures].set_string(n.active_features.empty() ? "(null)" : n.active_features);
    r[kNodeState].set_string(n.state);
    if (n.reservation)
      r[kNodeReservation].set_string(*n.reservation);
    else
      r[kNodeReservation] = Value();
    out.emit(r);
  }
  return nodes.size();
}

}  // namespace

size_t collect_slurm_nodes(SlurmClient& client, const CollectorContext& ctx, const SlurmSnapshotOptions& o,
                           RecordOut& out) {
  return o.sinfo_format == SinfoFormat::Json ? collect_nodes_from_json(client, ctx, o, out)
                                             : collect_nodes_from_text(client, ctx, o, out);
}

size_t collect_slurm_jobs(SlurmClient& client, const CollectorContext& ctx, const SlurmSnapshotOptions& o,
                          RecordOut& out) {
  SlurmQuery q = make_query("squeue_jobs", squeue_jobs_argv(), o);
  const int64_t now = collection_time(o);
  DelimitedOptions dopts;
  dopts.delimiter = "|#";
  dopts.header = false;
  dopts.columns = kSqueueColumns;
  if (o.squeue_gres_detail) dopts.columns.push_back("GRES_DETAIL");
  dopts.trailing_delimiter = true;
  dopts.length_mismatch = RowLengthPolicy::Error;  // a truncated or garbled line names its number
  // LASTSCHEDEVAL is missing from GCM's 2025 recordings; GRES_DETAIL may be, from a REST answer that falls back.
  dopts.optional_trailing_columns = o.squeue_gres_detail ? 2 : 1;
  Record r(kJobData);
  // Partitions repeat: keep the last derived_cluster computed.
  std::string last_partition;
  std::string last_derived = derived_for_partition(ctx, "");
  bool have_derived = false;
  auto time_field = [&](size_t f, std::string_view v) {
    if (is_unset_time(v)) {
      r[f].set_string(v);
      return;
    }
    r[f].set_string(format_iso(in_zone(parse_timestamp(v, o.zone), o.zone)));
  };
  return client.stream_rows(q, dopts, [&](const DelimitedHeader&, const DelimitedRow& row) {
    r[kJobTime] = now;
    r[kJobCluster].set_string(ctx.cluster);
    std::string_view partition = row[cPartition];
    if (!have_derived || partition != last_partition) {
      last_partition.assign(partition);
      last_derived = derived_for_partition(ctx, partition);
      have_derived = true;
    }
    r[kJobDerived].set_string(last_derived);
    r[kPendingResources].set_string(is_pending_on_resources(row[cState], row[cReason]) ? "True" : "False");
    r[kGpusRequested] = gres_or_tres_gpu_count(row[cTresPerNode]);
    r[kMinCpus] = int_or_null(maybe_int(row[cMinCpus]));
    r[kJobId].set_string(row[cJobArrayId]);
    r[kJobIdRaw].set_string(row[cJobId]);
    r[kName].set_string(row[cName]);
    r[kTimeLimit].set_string(row[cTimeLimit]);
    r[kMinMemory] = int_or_null(memory_to_bytes(row[cMinMemory]));
    r[kCommand].set_string(row[cCommand]);
    auto priority = maybe_float(row[cPriority]);
    r[kPriority] = priority ? Value(*priority) : Value();
    r[kJobState].set_string(row[cState]);
    r[kJobUser].set_string(row[cUserName]);
    r[kCpus] = int_or_null(maybe_int(row[cNumCpus]));
    r[kNodes] = int_or_null(maybe_int(row[cNumNodes]));
    r[kTimeLeft].set_string(row[cTimeLeft]);
    r[kTimeUsed].set_string(row[cTimeUsed]);
    set_nodelist(r[kNodelist], row[cNodelist]);
    r[kDependency].set_string(row[cDependency]);
    // Slurm 22.05 rejects EXCNODES ("Invalid job format specification" on stderr) and prints the column empty: null.
    set_nodelist(r[kExcNodes], row[cExcNodes]);
    time_field(kStartTime, row[cStartTime]);
    time_field(kSubmitTime, row[cSubmitTime]);
    time_field(kEligibleTime, row[cEligibleTime]);
    time_field(kAccrueTime, row[cAccrueTime]);
    r[kPendingTime] = int_or_null(maybe_int(row[cPendingTime]));
    r[kComment].set_string(row[cComment]);
    r[kJobPartition].set_string(partition);
    r[kAccount].set_string(row[cAccount]);
    r[kQos].set_string(row[cQos]);
    r[kJobReason].set_string(row[cReason]);
    std::string_view tres = row[cTresAlloc];
    r[kTresGpus] = tres_value(tres, "gres/gpu");
    r[kTresCpu] = tres_value(tres, "cpu");
    r[kTresMem] = tres_value(tres, "mem");
    r[kTresNode] = tres_value(tres, "node");
    r[kTresBilling] = tres_value(tres, "billing");
    r[kJobReservation].set_string(row[cReservation]);
    r[kRequeue].set_string(row[cRequeue]);
    r[kFeature].set_string(row[cFeature]);
    r[kRestartCnt] = strict_int(row[cRestartCnt]);
    set_nodelist(r[kSchedNodes], row[cSchedNodes]);
    if (row.has(cLastSchedEval))
      time_field(kLastSchedEval, row[cLastSchedEval]);
    else
      r[kLastSchedEval] = Value();
    // squeue has no gres_detail (gcm-newer.md §1.6): only the REST back end's lines carry it.
    std::optional<std::string> gpu_indices;
    if (row.has(cGresDetail) && !row[cGresDetail].empty()) {
      std::vector<std::string> per_node;
      for (std::string_view rest = row[cGresDetail];;) {
        size_t semi = rest.find(';');
        per_node.emplace_back(rest.substr(0, semi));
        if (semi == std::string_view::npos) break;
        rest.remove_prefix(semi + 1);
      }
      gpu_indices = gres_detail_gpu_indices(per_node);
    }
    if (gpu_indices)
      r[kGresGpuIndices].set_string(*gpu_indices);
    else
      r[kGresGpuIndices] = Value();
    out.emit(r);
  });
}

}  // namespace gcm
