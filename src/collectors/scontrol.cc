// gcm scontrol: one Scontrol record per partition of `scontrol show partition -a -o` (gcm-reference.md §1.18).
#include <cctype>

#include <fmt/format.h>

#include "collectors/slurm_backend.h"
#include "collectors/slurm_collectors.h"
#include "core/subprocess.h"
#include "slurm/coerce.h"
#include "slurm/derived_cluster.h"
#include "slurm/memory.h"
#include "slurm/tres.h"

namespace gcm {

// Named one by one: a using-directive here would reach the files compiled after this one in a unity batch.
using slurm::convert_memory_to_mb;
using slurm::derived_cluster;
using slurm::describe_bad_value;
using slurm::maybe_int;
using slurm::parse_scontrol_maxnodes;
using slurm::parse_tres_entries;
using slurm::ParseError;
using slurm::python_float;
using slurm::ScontrolRecord;
using slurm::SlurmClient;
using slurm::SlurmQuery;
using slurm::tres_value;
using slurm::TresEntry;

namespace {

enum Field : size_t {
  kCluster,
  kDerived,
  kPartition,
  kMaxNodes,
  kPartitionTresCpu,
  kPartitionTresMem,
  kPartitionTresNode,
  kPartitionTresBilling,
  kTresGresGpu,
  kWeightCpu,
  kWeightMem,
  kWeightGresGpu,
  kPriorityJobFactor,
  kPriorityTier,
  kTotalCpus,
  kTotalNodes,
  kPartitionQos,
  kPreemptMode,
  kPartitionNodes,
  kFieldCount
};

constinit const LazySchema kScontrol{[] {
  Schema s;
  s.name = "Scontrol";
  s.description = "One Slurm partition, from `scontrol show partition -a -o`.";
  s.metric_prefix = "slurm_partition";
  s.data_type = DataType::Log;
  s.identifier = DataIdentifier::Generic;
  const FieldType kStr = FieldType::String, kInt = FieldType::Int;
  const FieldRole kId = FieldRole::Identity, kGauge = FieldRole::Gauge, kAttr = FieldRole::Attribute;
  s.fields = {
      {"cluster", kStr, kId, "", "cluster name"},
      {"derived_cluster", kStr, kId, "", "<cluster>.<partition> with --heterogeneous-cluster-v1, else the cluster"},
      {"Partition", kStr, kId, "", "partition name (PartitionName)"},
      {"MaxNodes", kInt, kGauge, "", "maximum nodes per job; -1 for UNLIMITED"},
      {"TresCPU", kInt, kGauge, "", "cpu of TRES; null without TRES"},
      {"TresMEM", kInt, kGauge, "", "mem of TRES in MB"},
      {"TresNODE", kInt, kGauge, "", "node of TRES"},
      {"TresBILLING", kInt, kGauge, "", "billing of TRES"},
      {"TresGRESGPU", kInt, kGauge, "", "gres/gpu of TRES"},
      {"TresBillingWeightCPU", kInt, kGauge, "", "cpu of TRESBillingWeights; null without it"},
      {"TresBillingWeightMEM", kInt, kGauge, "", "mem of TRESBillingWeights, as MB (mem=0.125G -> 125)"},
      {"TresBillingWeightGRESGPU", kInt, kGauge, "", "gres/gpu of TRESBillingWeights"},
      {"PriorityJobFactor", kInt, kGauge, "", "PriorityJobFactor"},
      {"PriorityTier", kInt, kGauge, "", "PriorityTier"},
      {"TotalCPUs", kInt, kGauge, "", "CPUs in the partition"},
      {"TotalNodes", kInt, kGauge, "", "nodes in the partition"},
      {"QoS", kStr, kAttr, "", "partition QOS"},
      {"PreemptMode", kStr, kAttr, "", "preemption mode"},
      {"Nodes", kStr, kAttr, "", "the partition's nodes as a hostlist expression"},
  };
  snake_case_metric_names(s);
  return s;
}};

// A TRESBillingWeights item. The reference matched keys exactly and read values with int(), so Slurm's usual
// spelling ("CPU=1.0,Mem=0.25G,GRES/gpu=4.0") gave 0 for every weight (or would have raised on "cpu=1.0"). Here keys
// match without regard to case and non-memory weights are numbers truncated to integers ("4.0" -> 4); memory keeps
// the reference's MB conversion ("0.25G" -> 250). Absent key: 0, as in the reference.
int64_t billing_weight(std::string_view weights, std::string_view key) {
  auto iequal = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
        return false;
    return true;
  };
  int64_t value = 0;
  for (const TresEntry& e : parse_tres_entries(weights)) {
    if (!iequal(e.key, key)) continue;
    if (key == "mem") {
      value = convert_memory_to_mb(e.value);
    } else {
      auto f = python_float(e.value);
      if (!f || !(*f > -9.2e18 && *f < 9.2e18))
        throw ParseError(describe_bad_value("TRESBillingWeights item", e.value, "expected a number"));
      value = static_cast<int64_t>(*f);
    }
  }
  return value;
}

class ScontrolCollector : public Collector {
 public:
  explicit ScontrolCollector(OptionBinder& b) {
    add_slurm_timeout_option(b, timeout_s_);
    add_slurm_backend_options(b, backend_);
  }

  std::vector<CollectorTask> tasks(const CollectorContext&) override {
    opts_.timeout = slurm_timeout_ms(timeout_s_);
    slurm_.configure(backend_, opts_.timeout);
    return {{"partitions", &kScontrol.get(), [this](const CollectorContext& c, RecordOut& o) {
               collect_scontrol_partitions(slurm_.client(), c, opts_, o);
             }}};
  }

 private:
  double timeout_s_ = 60;
  SlurmSnapshotOptions opts_;
  SlurmBackendOptions backend_;
  SlurmBackend slurm_;
};

const bool kScontrolRegistered = register_collector({
    "scontrol",
    "Slurm partitions, one Scontrol record per partition",
    "Slurm partitions (LOG): one Scontrol record per partition of `scontrol show partition -a -o` (limits, TRES, "
    "billing weights, priority, node list).",
    86400,
    "scontrol",
    [](OptionBinder& b) { return std::make_unique<ScontrolCollector>(b); },
});
const bool kScontrolSchemasRegistered = register_schema(&kScontrol);

}  // namespace

const std::vector<std::string>& scontrol_partitions_argv() {
  static const std::vector<std::string> argv = {"scontrol", "show", "partition", "-a", "-o"};
  return argv;
}

const Schema& scontrol_schema() { return kScontrol; }

size_t collect_scontrol_partitions(SlurmClient& client, const CollectorContext& ctx, const SlurmSnapshotOptions& o,
                                   RecordOut& out) {
  SlurmQuery q;
  q.name = "scontrol_partitions";
  q.argv = scontrol_partitions_argv();
  q.timeout = o.timeout;
  Record r(kScontrol);
  size_t n = 0;
  client.stream_records(q, [&](const ScontrolRecord& rec) {
    auto name = rec.get("PartitionName");
    if (!name) {
      if (rec.fields.empty() && !rec.loose_words.empty() && rec.loose_words.front() == "No")
        return;  // "No partitions in the system"
      throw ParseError("not a partition: no PartitionName=");
    }
    if (!rec.loose_words.empty())
      throw ParseError(fmt::format("unexpected word '{}' before PartitionName=", rec.loose_words.front()));
    r[kCluster].set_string(ctx.cluster);
    r[kDerived] = derived_cluster(
        [&](std::string_view key) -> std::optional<std::string_view> {
          if (key == "PartitionName") return name;
          return std::nullopt;
        },
        ctx.heterogeneous_cluster_v1, ctx.cluster);
    r[kPartition].set_string(*name);
    auto max_nodes = rec.get("MaxNodes");
    r[kMaxNodes] = max_nodes ? Value(parse_scontrol_maxnodes(*max_nodes)) : Value();
    auto tres = rec.get("TRES");
    const std::pair<size_t, const char*> tres_keys[] = {{kPartitionTresCpu, "cpu"},
                                                        {kPartitionTresMem, "mem"},
                                                        {kPartitionTresNode, "node"},
                                                        {kPartitionTresBilling, "billing"},
                                                        {kTresGresGpu, "gres/gpu"}};
    for (const auto& [f, key] : tres_keys) r[f] = tres ? Value(tres_value(*tres, key)) : Value();
    auto weights = rec.get("TRESBillingWeights");
    const std::pair<size_t, const char*> weight_keys[] = {
        {kWeightCpu, "cpu"}, {kWeightMem, "mem"}, {kWeightGresGpu, "gres/gpu"}};
    for (const auto& [f, key] : weight_keys) r[f] = weights ? Value(billing_weight(*weights, key)) : Value();
    const std::pair<size_t, const char*> ints[] = {{kPriorityJobFactor, "PriorityJobFactor"},
                                                   {kPriorityTier, "PriorityTier"},
                                                   {kTotalCpus, "TotalCPUs"},
                                                   {kTotalNodes, "TotalNodes"}};
    for (const auto& [f, key] : ints) {
      auto v = rec.get(key);
      auto i = v ? maybe_int(*v) : std::nullopt;
      r[f] = i ? Value(*i) : Value();
    }
    const std::pair<size_t, const char*> strs[] = {{kPartitionQos, "QoS"}, {kPreemptMode, "PreemptMode"}, {kPartitionNodes, "Nodes"}};
    for (const auto& [f, key] : strs) {
      auto v = rec.get(key);
      r[f] = v ? Value(*v) : Value();
    }
    out.emit(r);
    ++n;
  });
  return n;
}

}  // namespace gcm
