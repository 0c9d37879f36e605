// The node's hardware events in the kernel log other than GPU XIDs (those have NVIDIA's catalogue: xid_catalogue.h),
// each with what the project says of it: NVSwitch SXids, network links going down and up, machine checks and PCIe
// AER errors. The line parsers are xid_line.h, link_flap_line.h, mce_line.h and pcie_aer_line.h; this file gives
// each (kind, class) one severity, likely cause and recommended action, for the agent's counters and LOG records and
// for any check that reports the same lines.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "health/xid_catalogue.h"
#include "health/xid_line.h"

namespace gcm::health {

enum class KernelEventKind { SXid, LinkDown, LinkUp, Mce, PcieAer };
const char* to_string(KernelEventKind k);  // "sxid", "link_down", "link_up", "mce", "pcie_aer"

// One row of the classification table. `cls` is the class within the kind:
//   sxid: fatal, non_fatal (as the line says)           link_down, link_up: infiniband, ethernet
//   mce: corrected, uncorrected, fatal, logged, thermal  pcie_aer: corrected, non_fatal, fatal
struct KernelEventClass {
  KernelEventKind kind;
  const char* cls;
  XidSeverity severity;  // critical, warn, or ignore (informational: a link that came back)
  const char* cause;
  const char* action;
};

// Every row, for documentation and tests.
std::span<const KernelEventClass> kernel_event_classes();
// The row of (kind, cls); nullptr when there is none.
const KernelEventClass* find_kernel_event_class(KernelEventKind kind, std::string_view cls);

struct KernelEvent {
  const KernelEventClass* info = nullptr;  // never null in an event these functions return
  std::string device;       // PCI address ("0000:c5:00.0"), interface ("ib1"), CPU ("cpu3"), or "" when none
  int nvswitch = -1;        // SXid: N of the "nvidia-nvswitchN" that printed it
  std::optional<int> code;  // SXid: its number
  std::string detail;       // the line's text
};

// A link, machine-check or AER line as an event (nullopt: none of them).
std::optional<KernelEvent> classify_host_event(std::string_view message);
// An SXid line that parse_xid_line already read (nullopt for a GPU XID or an SXid without a number).
std::optional<KernelEvent> sxid_event(const XidLine& line, std::string_view message);
// Any of the above from one line of the kernel log.
std::optional<KernelEvent> classify_kernel_event(std::string_view message);

}  // namespace gcm::health
