#include "health/link_flap_line.h"

#include <cctype>

namespace gcm::health {

namespace {

struct Phrase {
  std::string_view lower;  // matched case-insensitively
  LinkChange change;
  bool lost_carrier;
};

// Longest first where one phrase contains another ("nic link is down" before "link is down").
constexpr Phrase kPhrases[] = {
    {"lost carrier", LinkChange::Down, true},      {"gained carrier", LinkChange::Up, false},
    {"nic link is down", LinkChange::Down, false}, {"nic link is up", LinkChange::Up, false},
    {"link is down", LinkChange::Down, false},     {"link is up", LinkChange::Up, false},
    {"link down", LinkChange::Down, false},        {"link up", LinkChange::Up, false},
    {"link becomes ready", LinkChange::Up, false},
};

// A Linux interface name: 1 to 15 bytes (IFNAMSIZ - 1) of letters, digits and "_.-@", starting with a letter.
bool is_interface_name(std::string_view s) {
  if (s.empty() || s.size() > 15 || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-' && c != '@') return false;
  return true;
}

// The phrase must end the line or be followed by a separator: "Link up" is not "Link upgrade".
bool ends_word(std::string_view line, size_t end) {
  return end == line.size() || !std::isalnum(static_cast<unsigned char>(line[end]));
}

}  // namespace

// "igb: eno1 NIC Link is Up" -> "eno1" too: drivers that print the name without a colon after it.
std::string_view link_interface_before(std::string_view line, size_t at) {
  std::string_view head = line.substr(0, at);
  while (!head.empty() && (head.back() == ' ' || head.back() == ':')) head.remove_suffix(1);
  size_t start = head.find_last_of(" :[]");
  return start == std::string_view::npos ? head : head.substr(start + 1);
}

const char* to_string(LinkKind k) { return k == LinkKind::InfiniBand ? "infiniband" : "ethernet"; }

bool contains_ci(std::string_view hay, std::string_view lower_needle, size_t* at) {
  if (hay.size() < lower_needle.size()) return false;
  for (size_t i = 0; i + lower_needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < lower_needle.size() && std::tolower(static_cast<unsigned char>(hay[i + k])) == lower_needle[k]) ++k;
    if (k == lower_needle.size()) {
      if (at) *at = i;
      return true;
    }
  }
  return false;
}

std::optional<LinkFlapLine> parse_link_flap_line(std::string_view line) {
  // Every phrase has "carrier" or "link" in it: one cheap look rules out almost every line of a kernel log.
  if (!contains_ci(line, "link") && !contains_ci(line, "carrier")) return std::nullopt;
  for (const Phrase& p : kPhrases) {
    size_t at = 0;
    if (!contains_ci(line, p.lower, &at) || !ends_word(line, at + p.lower.size())) continue;
    std::string_view ifname = link_interface_before(line, at);
    if (!is_interface_name(ifname)) return std::nullopt;
    LinkFlapLine f;
    f.change = p.change;
    f.lost_carrier = p.lost_carrier;
    f.interface = std::string(ifname);
    f.kind = ifname.substr(0, 2) == "ib" ? LinkKind::InfiniBand : LinkKind::Ethernet;
    return f;
  }
  return std::nullopt;
}

std::optional<LinkKind> gcm_link_flap_kind(std::string_view line) {
  if (line.find("ib") != std::string_view::npos) return LinkKind::InfiniBand;
  if (line.find("eth") != std::string_view::npos) return LinkKind::Ethernet;
  return std::nullopt;
}

}  // namespace gcm::health
