// The node's side of Slurm for the suite runners: its name, where scontrol and slurm.conf are when the
// environment does not say (HealthCheckProgram runs with no PATH and no SLURM_CONF), its state and reason, and
// draining/resuming it under gcm's ownership rules.
#pragma once

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
  std::string state;   // State= as scontrol prints it: "IDLE+DRAIN", "MIXED", "DOWN*+DRAIN"
  std::string reason;  // Reason= without the " [user@time]" suffix; empty when none
  bool drain = false;  // DRAIN is among the state's flags
};

// The prefix that marks a reason as gcm's own.
inline constexpr const char* kReasonPrefix = "gcm: ";

// "gcm: <check>: <message>", first line of the message only, at most max_len bytes (UTF-8 safe cut, "..." marks it).
std::string drain_reason(const std::string& check, const std::string& message, size_t max_len);

// Runs scontrol (argv only) with a timeout; the runner passes its own so tests can fake Slurm.
using ScontrolRunner = std::function<std::string(const std::vector<std::string>& args)>;  // throws on failure
ScontrolRunner make_scontrol_runner(const std::string& scontrol, const std::optional<std::string>& slurm_conf,
                                    double timeout_s);

// `scontrol -o show node NAME`, parsed. Throws std::runtime_error (node unknown, slurmctld unreachable).
NodeState show_node(const ScontrolRunner& scontrol, const std::string& node);

// Who owns the node's current reason, as the runner decides what to do.
enum class Ownership { None, Gcm, Other };
// `adopted`: reasons that are gcm's because gcm's own prolog/epilog failure made Slurm set them ("Prolog error",
// "Epilog error", recorded in the runner's state file).
Ownership reason_owner(const NodeState& s, const std::vector<std::string>& adopted);

}  // namespace gcm::suite
