// Recognises a network link going down or coming up in one log line, for the link-flaps check (syslog) and the
// agent's kernel-log stream alike:
//   "systemd-networkd[812]: eth0: Lost carrier", "... ib1: Gained carrier"         (networkd, and the fixtures)
//   "mlx5_core 0000:17:00.0 enp23s0f0np0: Link down", "...: Link up"               (mlx5e)
//   "ixgbe 0000:01:00.0 eth0: NIC Link is Down", "bnxt_en ... NIC Link is Up, ..." (Intel, Broadcom drivers)
//   "tg3 0000:01:00.0 eth0: Link is down", "... Link is up at 1000 Mbps"           (tg3 and others)
//   "IPv6: ADDRCONF(NETDEV_CHANGE): ib0: link becomes ready"                       (the stack: carrier is up)
// The interface is the word before the phrase; one that is no interface name ("pciehp: Slot(1): Link Down" is a
// PCIe hot-plug slot) makes the line no link flap.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gcm::health {

enum class LinkChange { Down, Up };
enum class LinkKind { InfiniBand, Ethernet };
const char* to_string(LinkKind k);  // "infiniband", "ethernet"

struct LinkFlapLine {
  LinkChange change = LinkChange::Down;
  LinkKind kind = LinkKind::Ethernet;  // by the interface's name: ib* is InfiniBand (IPoIB), the rest Ethernet
  std::string interface;               // "ib1", "eth0", "enp23s0f0np0"
  bool lost_carrier = false;           // the "Lost carrier" form, the only one GCM's link-flaps check counts
};

std::optional<LinkFlapLine> parse_link_flap_line(std::string_view line);

// GCM's classification of a "Lost carrier" line, kept for the link-flaps check's compatibility: InfiniBand when
// the line mentions "ib" anywhere, else Ethernet when it mentions "eth", else neither (nullopt: not reported).
std::optional<LinkKind> gcm_link_flap_kind(std::string_view line);

// The word before offset `at` of the line, without the ": " between: "... kernel: ib1: Lost carrier" -> "ib1".
std::string_view link_interface_before(std::string_view line, size_t at);

// Case-insensitive search of a lower-case needle; *at receives the offset of the first match.
bool contains_ci(std::string_view hay, std::string_view lower_needle, size_t* at = nullptr);

}  // namespace gcm::health
