// Slurm hostlist expressions: "node[001-010,015]", "rack[1-2]-node[01-04]", "h100-193-[001-003]", "a,b[1-2],c".
//
// Grammar (what Slurm prints, and what the reference's nodelist parser accepts, plus its fixes below):
//   hostlist := item ("," item)*            spaces around items are ignored, empty items are skipped
//   item     := text? (group text?)*        at least one character or group
//   group    := "[" range ("," range)* "]"
//   range    := N | M "-" N                 decimal, M <= N, at most 18 digits
//   text     := [A-Za-z0-9._-]+
// Several groups give the Cartesian product, the first group varying slowest (node[1-2][3-4] -> node13, node14,
// node23, node24). A range is zero-padded to the width of its first number ("[009-011]" -> 009 010 011, "[8-10]" ->
// 8 9 10); a single number keeps its digits ("[015]" -> 015).
//
// Differences from the reference (gcm-reference.md §1.9 "Nodelist parsing"), on purpose (design.md §5):
//   - single-character host names ("a") are valid (the reference required two characters);
//   - text after the last group is a suffix ("node[1-2]-ib" -> node1-ib, node2-ib), as in Slurm; the reference failed;
//   - '.' and '_' are allowed in names (Slurm node names may contain them; the reference rejected them);
//   - malformed input is an error naming the position, instead of a silent "no list" (nodelist_or_null() keeps the
//     reference's null result for schema fields).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "slurm/parse_error.h"

namespace gcm::slurm {

// A malformed hostlist. position() is the 0-based byte offset of the offending character in the input.
class HostlistError : public ParseError {
 public:
  HostlistError(std::string_view hostlist, size_t position, std::string_view why);
  size_t position() const { return position_; }

 private:
  size_t position_;
};

// A parsed hostlist: validated once, then expanded, counted or searched without re-parsing. It keeps its own copy
// of the text, so it may outlive the string it was parsed from.
class Hostlist {
 public:
  // Refuses lists that would expand to more than max_hosts names (a typo such as "n[0-999999999]" must not
  // exhaust memory); the default is far above any real cluster.
  static constexpr uint64_t kDefaultMaxHosts = 1u << 24;

  // Throws HostlistError on malformed input, including an empty or all-blank string.
  static Hostlist parse(std::string_view text, uint64_t max_hosts = kDefaultMaxHosts);

  // The number of names the list expands to (duplicates included), computed without expanding.
  uint64_t size() const { return size_; }

  // Calls on_host for every name, in order. The view is valid only during the call (one buffer is reused).
  void for_each(const std::function<void(std::string_view host)>& on_host) const;

  // Appends every name to out (reserving once): the fast path, no allocation per host beyond the string itself
  // (none at all for names of up to 15 characters, thanks to the small-string buffer).
  void append_to(std::vector<std::string>& out) const;

  // True when host is one of the names, decided without expanding the list.
  bool contains(std::string_view host) const;

  // Implementation types, public so the .cc helpers can name them.
  struct Range {
    uint64_t lo = 0, hi = 0;
    uint8_t width = 0;  // zero-pad to this many digits
  };
  struct Group {
    std::vector<Range> ranges;
  };
  // A piece of the hostlist's text, by position (not a view, so that copies and moves of Hostlist stay valid).
  struct Span {
    uint32_t pos = 0, len = 0;
  };
  // texts.size() == groups.size() + 1: text, group, text, group, ..., text (texts may be empty).
  struct Item {
    std::vector<Span> texts;
    std::vector<Group> groups;
  };

 private:
  std::string text_;
  std::vector<Item> items_;
  uint64_t size_ = 0;
};

// Expands a hostlist into names (throws HostlistError).
std::vector<std::string> expand_hostlist(std::string_view hostlist);

// Expands into out (appended; clear it to reuse its capacity). Throws HostlistError before appending anything.
void expand_hostlist_into(std::string_view hostlist, std::vector<std::string>& out);

// The reference's nodelist(...)[0] for schema fields: the names, or nullopt for "", "(null)", "None assigned" and
// anything malformed.
std::optional<std::vector<std::string>> nodelist_or_null(std::string_view hostlist);

// Slurm's compression: names are split into prefix, number (the last run of digits, at most 18) and suffix;
// consecutive names with the same prefix and suffix whose numbers ascend by one at the same zero-padded width form
// a range; neighbouring ranges with the same prefix and suffix share one bracket. Order and duplicates are kept, so
// expand_hostlist(compress_hostlist(names)) == names. A name with no number, or a lone number, is written plainly.
// Throws HostlistError for a name that could not be read back (empty, or containing characters outside the
// grammar).
std::string compress_hostlist(std::span<const std::string> hosts);
std::string compress_hostlist(std::span<const std::string_view> hosts);

// The canonical spelling of a hostlist: compress_hostlist(expand_hostlist(hostlist)).
std::string canonical_hostlist(std::string_view hostlist);

// True when host is in hostlist (shelper's HostnameInList with the full grammar, design.md §5); false when the list
// is malformed or the host empty.
bool hostlist_contains(std::string_view hostlist, std::string_view host);

}  // namespace gcm::slurm
