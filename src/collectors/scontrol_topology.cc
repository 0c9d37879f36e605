// gcm scontrol_topology (gcm-newer.md §1.2): the network topology slurmctld schedules on, one ScontrolTopology LOG
// record per switch (topology/tree) or block (topology/block) line of `scontrol show topo`, hourly by default.

#include <fmt/format.h>

#include "collectors/scheduler_collectors.h"
#include "core/ascii.h"
#include "collectors/slurm_query_collector.h"
#include "slurm/coerce.h"
#include "slurm/derived_cluster.h"
#include "slurm/hostlist.h"

namespace gcm::scheduler {

namespace {
enum Field : size_t {
  kCluster,
  kDerived,
  kBlockName,
  kBlockIndex,
  kBlockSize,
  kSwitchName,
  kLevel,
  kLinkSpeed,
  kSwitches,
  kNodes,
  kNodeCount
};
}  // namespace

constinit const LazySchema kScontrolTopology{[] {
  Schema s;
  s.name = "ScontrolTopology";
  s.description = "One switch (topology/tree) or block (topology/block) of `scontrol show topo`.";
  s.metric_prefix = "slurm_topology";
  s.data_type = DataType::Log;
  s.identifier = DataIdentifier::Generic;
  const FieldType kStr = FieldType::String, kInt = FieldType::Int;
  const FieldRole kId = FieldRole::Identity, kAttr = FieldRole::Attribute;
  s.fields = {
      {"cluster", kStr, kId, "", "cluster name"},
      {"derived_cluster", kStr, kId, "", "the cluster (topology lines have no partition)"},
      {"BlockName", kStr, kId, "", "block name (topology/block); null for a switch"},
      {"BlockIndex", kInt, kAttr, "", "block index (topology/block)"},
      {"BlockSize", kInt, kAttr, "", "nodes per block (topology/block)"},
      {"SwitchName", kStr, kId, "", "switch name (topology/tree); null for a block"},
      {"Level", kInt, kAttr, "", "switch level, 0 for a leaf switch (topology/tree)"},
      {"LinkSpeed", kInt, kAttr, "", "LinkSpeed as configured in topology.conf (topology/tree)"},
      {"Switches", kStr, kAttr, "", "child switches as a hostlist expression (topology/tree)"},
      {"Nodes", kStr, kAttr, "",
       "the nodes, expanded and comma-joined; cut after 10000 names, then \",...\" (node_count has them all)"},
      {"node_count", FieldType::Int, FieldRole::Gauge, "", "number of nodes of the Nodes hostlist"},
  };
  return s;
}};

slurm::SlurmQuery scontrol_topology_query(std::chrono::milliseconds timeout) {
  return {"scontrol_topology", {"scontrol", "show", "topo"}, timeout};
}

namespace {

// Stops Hostlist::for_each once the cap is reached: a spine's list may expand to a whole cluster.
struct CapReached {};

// The first kTopologyNodesCap names of the list joined by ',', then ",..." when there were more.
std::string capped_nodes(const slurm::Hostlist& hosts) {
  std::string out;
  size_t n = 0;
  try {
    hosts.for_each([&](std::string_view host) {
      if (n == kTopologyNodesCap) throw CapReached{};
      if (n++) out.push_back(',');
      out.append(host);
    });
  } catch (const CapReached&) {
    out.append(",...");
  }
  return out;
}

Value int_value(std::string_view key, std::string_view text) {
  auto i = slurm::python_int(text);
  if (!i) throw slurm::ParseError(slurm::describe_bad_value(key, text, "expected an integer"));
  return Value(*i);
}

}  // namespace

size_t collect_scontrol_topology(slurm::SlurmClient& slurm, const Params& p, RecordOut& out) {
  Record r(kScontrolTopology);
  std::vector<std::string_view> tokens;
  size_t n = 0;
  slurm.stream_lines(scontrol_topology_query(p.timeout), [&](std::string_view line) {
    if (ascii_trim(line).empty()) return;
    for (auto& v : r.values) v = Value();
    r[kCluster] = p.cluster;
    r[kDerived] = slurm::derived_cluster([](std::string_view) { return std::optional<std::string_view>(); },
                                         p.heterogeneous_cluster_v1, p.cluster);
    slurm::split_fields(line, "", tokens);
    for (std::string_view t : tokens) {
      size_t eq = t.find('=');
      if (eq == std::string_view::npos || eq == 0)
        throw slurm::ParseError(slurm::describe_bad_value("token", t, "expected KEY=VALUE"));
      std::string_view key = t.substr(0, eq), value = t.substr(eq + 1);
      if (key == "BlockName")
        r[kBlockName].set_string(value);
      else if (key == "BlockIndex")
        r[kBlockIndex] = int_value(key, value);
      else if (key == "BlockSize")
        r[kBlockSize] = int_value(key, value);
      else if (key == "SwitchName")
        r[kSwitchName].set_string(value);
      else if (key == "Level")
        r[kLevel] = int_value(key, value);
      else if (key == "LinkSpeed")
        r[kLinkSpeed] = int_value(key, value);
      else if (key == "Switches")
        r[kSwitches].set_string(value);
      else if (key == "Nodes") {
        // A switch or block without nodes prints an empty list in some versions: no names, count 0.
        if (value.empty() || value == "(null)") {
          r[kNodes].set_string("");
          r[kNodeCount] = int64_t{0};
          continue;
        }
        slurm::Hostlist hosts = slurm::Hostlist::parse(value);
        r[kNodes] = capped_nodes(hosts);
        r[kNodeCount] = static_cast<int64_t>(hosts.size());
      }
      // Other keys (a later Slurm's additions) are not part of the record, as in GCM.
    }
    if (r[kSwitchName].is_null() && r[kBlockName].is_null())
      throw slurm::ParseError("neither SwitchName= nor BlockName= on the line");
    out.emit(r);
    ++n;
  });
  return n;
}

namespace {
const bool kScontrolTopologyRegistered = register_slurm_query_collector(
    {"scontrol_topology",
     "The network topology slurmctld schedules on",
     "The network topology slurmctld schedules on (`scontrol show topo`): one ScontrolTopology LOG record per switch "
     "(topology/tree) or block (topology/block), with its nodes expanded (at most 10000) and counted.",
     3600, &kScontrolTopology, "Seconds `scontrol show topo` may run before it is killed and the round fails.",
     collect_scontrol_topology, /*takes_rest_backend=*/false});
}  // namespace

}  // namespace gcm::scheduler
