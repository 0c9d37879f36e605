#include "slurm/node_state.h"

#include <algorithm>
#include <array>

#include "core/ascii.h"
#include "slurm/coerce.h"

namespace gcm::slurm {

namespace {

uint16_t flag_of(char c) {
  NodeFlag f;
  switch (c) {
    case '*':
      f = NodeFlag::NotResponding;
      break;
    case '~':
      f = NodeFlag::PoweredDown;
      break;
    case '#':
      f = NodeFlag::PoweringUp;
      break;
    case '!':
      f = NodeFlag::PowerDownPending;
      break;
    case '%':
      f = NodeFlag::PoweringDown;
      break;
    case '$':
      f = NodeFlag::MaintReservation;
      break;
    case '@':
      f = NodeFlag::RebootPending;
      break;
    case '^':
      f = NodeFlag::RebootIssued;
      break;
    case '-':
      f = NodeFlag::PlannedByBackfill;
      break;
    default:
      return 0;
  }
  return static_cast<uint16_t>(f);
}

// sinfo %t spellings of the states whose long form differs.
std::string_view long_form(std::string_view word) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 13> kShort{{
      {"alloc", "allocated"},
      {"comp", "completing"},
      {"drain", "drained"},
      {"drng", "draining"},
      {"failg", "failing"},
      {"futr", "future"},
      {"mix", "mixed"},
      {"npc", "perfctrs"},
      {"plnd", "planned"},
      {"pow_dn", "power_down"},
      {"pow_up", "powering_up"},
      {"resv", "reserved"},
      {"unk", "unknown"},
  }};
  for (const auto& [s, l] : kShort) {
    if (word == s) return l;
  }
  return word;
}

bool one_of(std::string_view word, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), word) != set.end();
}

}  // namespace

bool NodeState::has_state(std::string_view word) const {
  return base == word || std::find(extra.begin(), extra.end(), word) != extra.end();
}

bool NodeState::is_down() const {
  return one_of(base, {"drained", "down", "maint", "powered_down", "powering_down", "powering_up", "fail", "future",
                       "inval", "perfctrs"});
}

bool NodeState::is_running_jobs() const {
  return one_of(base, {"allocated", "mixed", "draining", "completing", "failing"});
}

std::string_view NodeState::counted_state() const {
  static constexpr std::string_view kNodeStates[] = {
      "allocated",     "blocked",          "completing",  "down",     "drained", "draining",
      "fail",          "failing",          "future",      "idle",     "inval",   "maint",
      "reboot_issued", "reboot_requested", "mixed",       "perfctrs", "planned", "power_down",
      "powered_down",  "powering_down",    "powering_up", "reserved", "unknown"};
  if (!extra.empty()) return {};
  for (std::string_view s : kNodeStates) {
    if (base == s) return s;
  }
  return {};
}

NodeState parse_node_state(std::string_view text) {
  std::string_view s = ascii_trim(text);
  if (s.empty()) throw ParseError(describe_bad_value("node state", text, "is empty"));
  NodeState st;
  size_t start = 0;
  while (true) {
    size_t plus = s.find('+', start);
    std::string_view word = s.substr(start, plus == std::string_view::npos ? std::string_view::npos : plus - start);
    bool last = plus == std::string_view::npos;
    while (!word.empty() && flag_of(word.back())) {
      st.flags |= flag_of(word.back());
      word.remove_suffix(1);
    }
    if (word.empty()) {
      // Only the end may be empty: "allocated+" is sinfo's "more states" mark, not a word.
      if (!last || start == 0) throw ParseError(describe_bad_value("node state", text, "empty state word"));
      st.flags |= static_cast<uint16_t>(NodeFlag::MoreStates);
      break;
    }
    std::string lower;
    for (char c : word) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (!((c >= 'a' && c <= 'z') || c == '_'))
        throw ParseError(describe_bad_value("node state", text, std::string("unexpected character '") + c + "'"));
      lower.push_back(c);
    }
    if (st.base.empty())
      st.base = long_form(lower);
    else
      st.extra.push_back(std::move(lower));
    if (last) break;
    start = plus + 1;
  }
  return st;
}

}  // namespace gcm::slurm
