// Nodes from `sinfo --all -N --json` (gcm-newer.md §1.6), reduced to what slurm_job_monitor's NodeData reads from a
// row of `sinfo --all -N -o %all`: one entry per node and partition, with sinfo's long state ("drained*").
//
// Two layouts exist. Slurm 23.11 and later (data_parser v0.0.40+) print "sinfo": rows, each with its nodes
// (nodes.nodes) and one partition object; this is what GCM reads. Slurm 22.05 to 23.02 (v0.0.38/39) print "nodes":
// node records, each naming its partitions, with sinfo's CPU split left to the reader. Both are read, so the JSON
// source also works, and is tested live, on the testbed's 22.05.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/parse_error.h"

namespace gcm::slurm {

struct SinfoJsonNode {
  std::string name;
  std::string partition;  // the plain name: the JSON does not mark the default partition (the text form's '*')
  int64_t cpus_allocated = 0, cpus_idle = 0, cpus_other = 0, cpus_total = 0;
  std::optional<int64_t> free_mem;         // MB; null when slurmd has not reported it
  int64_t memory = 0;                      // configured (real) memory, MB
  std::string gres;                        // "gpu:ampere:8"; "" when none
  std::string gres_used;                   // "gpu:ampere:2(IDX:0-1)"; "" when none
  std::string user;                        // who set the reason; "Unknown" when there is none (as sinfo prints it)
  std::string reason;                      // "none" when there is none
  std::string timestamp;                   // when the reason was set, UTC "YYYY-MM-DDTHH:MM:SS"; "Unknown" when never
  std::string active_features;             // comma-separated; "" when none
  std::string state;                       // sinfo's long state, lower case with its flag suffix: sinfo_long_state()
  std::optional<std::string> reservation;  // null where the layout has none (22.05, as its `-o %all`)
};

// Throws ParseError naming the row and the key that is missing or has the wrong type. The node records of
// slurmrestd's /slurm/v0.0.NN/nodes are the same as 22.05's `sinfo --json` (v0.0.38) or close to it (23.11+: the
// state as a list of words, free_mem, features as lists), and are read too.
std::vector<SinfoJsonNode> parse_sinfo_json(std::string_view text);

// sinfo's long state (`%T`, `-o %all`'s last STATE column) from the JSON's state words: the base state first
// ("IDLE", "MIXED", ...), then its flags ("DRAIN", "NOT_RESPONDING", ...), in any case. Slurm's node_state_string
// rules, as GCM's newest client renders them: "drained", "draining*", "allocated+", "maint", "reboot^", "idle~", ...
// Throws ParseError for an empty list.
std::string sinfo_long_state(const std::vector<std::string>& words);

}  // namespace gcm::slurm
