// Node states as sinfo and scontrol print them: "idle", "down*", "idle~", "drained*", "allocated+", "mixed+drain",
// "DRAINING", "IDLE+CLOUD+POWERED_DOWN", sinfo's short forms ("alloc", "mix", "drng"), each word possibly ending in
// flag symbols.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/parse_error.h"

namespace gcm::slurm {

// The symbols sinfo appends to a state (sinfo(1), "NODE STATE CODES").
enum class NodeFlag : uint16_t {
  NotResponding = 1 << 0,      // '*'
  PoweredDown = 1 << 1,        // '~'  powered off by power saving
  PoweringUp = 1 << 2,         // '#'  powering up or being configured
  PowerDownPending = 1 << 3,   // '!'
  PoweringDown = 1 << 4,       // '%'
  MaintReservation = 1 << 5,   // '$'
  RebootPending = 1 << 6,      // '@'
  RebootIssued = 1 << 7,       // '^'
  PlannedByBackfill = 1 << 8,  // '-'
  MoreStates = 1 << 9,         // '+' at the end ("allocated+"): further states that the short form does not show
};

struct NodeState {
  std::string base;                // first state word, lower case, flags removed, short forms spelled out
  std::vector<std::string> extra;  // further '+'-joined words, lower case ("drain", "cloud", "powered_down")
  uint16_t flags = 0;              // NodeFlag bits from every word

  bool has(NodeFlag f) const { return (flags & static_cast<uint16_t>(f)) != 0; }
  // True when word (lower case) is the base or one of the extra words.
  bool has_state(std::string_view word) const;

  // The reference's NODE_DOWN_STATES test, on the base word: drained, down, maint, powered_down, powering_down,
  // powering_up, fail, future, inval, perfctrs.
  // design.md §5 fix: "failing" (allocated, failure pending) is not down; the reference's prefix match on "fail"
  // counted it as down.
  bool is_down() const;
  // The reference's NODE_RUNNING_JOB_STATES test, on the base word: allocated, mixed, draining, completing, failing
  // ("allocated+" included, since '+' is a flag here).
  bool is_running_jobs() const;
  // The state slurm_monitor counts the node under (its nodes_<state> field): the base word when it is one of the
  // reference's NODE_STATES and no other word follows; "" means nodes_unknown_state.
  // design.md §5 fix: "allocated+" counts as allocated (the reference crashed on it).
  std::string_view counted_state() const;
};

// Throws ParseError for an empty state or characters other than letters, '_', '+' and the flag symbols.
NodeState parse_node_state(std::string_view text);

}  // namespace gcm::slurm
