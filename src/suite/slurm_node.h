// The node's side of Slurm for the suite runners: its name, where scontrol and slurm.conf are when the
// environment does not say (HealthCheckProgram runs with no PATH and no SLURM_CONF), its state and reason, and
// draining/resuming it under gcm's ownership rules.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gcm::suite {

// SLURMD_NODENAME, else the host name up to its first '.'.
std::string slurm_node_name();

// scontrol: `configured` if given, else the first executable `scontrol` in $PATH, then /usr/bin, /usr/local/bin,
// /opt/slurm/bin, /usr/sbin, /usr/local/sbin. nullopt when none is found.
std::optional<std::string> locate_scontrol(const std::optional<std::string>& configured);
// slurm.conf: `configured`, else $SLURM_CONF, else the first existing of /etc/slurm/slurm.conf,
// /etc/slurm-llnl/slurm.conf, /usr/local/etc/slurm.conf, /opt/slurm/etc/slurm.conf. nullopt: let scontrol decide
// (configless setups ask slurmd).
std::optional<std::string> locate_slurm_conf(const std::optional<std::string>& configured);
// ClusterName= of a slurm.conf (read locally: no call to slurmctld). nullopt when absent.
std::optional<std::string> cluster_name_of(const std::string& slurm_conf);

struct NodeState {
  std::string name;    // NodeName=
  std::string state;   // State= as scontrol prints it: "IDLE+DRAIN", "MIXED", "DOWN*+DRAIN"
  std::string reason;  // Reason= without the " [user@time]" suffix; empty when none
  bool drain = false;  // DRAIN is among the state's flags
  // A job holds the node (ALLOCATED, MIXED or COMPLETING): a drain only takes effect, and a confirmation check on
  // idle GPUs can only run, once this is false.
  bool busy = false;
  std::optional<int64_t> reason_time;  // Unix seconds of the reason's "[user@time]" suffix, read as local time
  std::vector<std::string> partitions;
};

// The prefix that marks a reason as gcm's own.
inline constexpr const char* kReasonPrefix = "gcm: ";
// The reason of a drain that the zombie-GPU detector asked for (the agent's node-local drain, or `gcm drainer`'s
// for an alert): only the agent's confirmation check on the idle node resumes it, never a passing `gcm
// healthcheck`, whose checks cannot see a GPU that is slow but healthy.
inline constexpr const char* kDetectorCheckName = "detector";
bool needs_confirmation(const std::string& reason);

// "gcm: <check>: <message>", first line of the message only, at most max_len bytes (UTF-8 safe cut, "..." marks it).
std::string drain_reason(const std::string& check, const std::string& message, size_t max_len);

// Runs scontrol (argv only) with a timeout; the runner passes its own so tests can fake Slurm.
using ScontrolRunner = std::function<std::string(const std::vector<std::string>& args)>;  // throws on failure
ScontrolRunner make_scontrol_runner(const std::string& scontrol, const std::optional<std::string>& slurm_conf,
                                    double timeout_s);

// `scontrol -o show node NAME`, parsed. Throws std::runtime_error (node unknown, slurmctld unreachable).
NodeState show_node(const ScontrolRunner& scontrol, const std::string& node);
// `scontrol show node` (every node), parsed: for the drain budget, which counts the cluster's detector drains.
std::vector<NodeState> show_nodes(const ScontrolRunner& scontrol);
// The records of `scontrol show node` output (the multi-line form), in order. Throws std::runtime_error for a record
// without State=.
std::vector<NodeState> parse_node_records(const std::string& scontrol_output);

// Who owns the node's current reason, as the runner decides what to do.
enum class Ownership { None, Gcm, Other };
// `adopted`: reasons that are gcm's because gcm's own prolog/epilog failure made Slurm set them ("Prolog error",
// "Epilog error", recorded in the runner's state file).
Ownership reason_owner(const NodeState& s, const std::vector<std::string>& adopted);

}  // namespace gcm::suite
