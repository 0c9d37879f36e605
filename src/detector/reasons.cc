#include "detector/reasons.h"

#include <array>

namespace gcm::detector {

namespace {
constexpr std::array<const char*, kReasonCount> kNames = {
    "peer_slow",    "hw_slowdown",   "hw_thermal",     "power_brake",       "pcie_degraded",
    "pcie_replays", "nvlink_errors", "ecc_dbe",        "row_remap_pending", "row_remap_failure",
    "xid",          "lost",          "not_responding", "pcie_aer",          "nvlink_down",  "rank_slow",
};
constexpr std::array<const char*, kNodeReasonCount> kNodeNames = {
    "sxid_fatal", "pcie_aer", "mce_uncorrected", "ib_link_down", "fabric_manager",
};
}  // namespace

const char* reason_name(Reason r) {
  auto i = static_cast<size_t>(r);
  return i < kNames.size() ? kNames[i] : "?";
}

std::optional<Reason> parse_reason(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (name == kNames[i]) return static_cast<Reason>(i);
  }
  return std::nullopt;
}

const char* node_reason_name(NodeReason r) {
  auto i = static_cast<size_t>(r);
  return i < kNodeNames.size() ? kNodeNames[i] : "?";
}

std::optional<NodeReason> parse_node_reason(std::string_view name) {
  for (size_t i = 0; i < kNodeNames.size(); ++i) {
    if (name == kNodeNames[i]) return static_cast<NodeReason>(i);
  }
  return std::nullopt;
}

std::string ReasonSet::to_string() const {
  std::string out;
  for (int i = 0; i < kReasonCount; ++i) {
    auto r = static_cast<Reason>(i);
    if (!has(r)) continue;
    if (!out.empty()) out.push_back(',');
    out += reason_name(r);
  }
  return out;
}

}  // namespace gcm::detector
