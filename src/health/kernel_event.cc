#include "health/kernel_event.h"

#include <cctype>

#include <fmt/format.h>

#include "core/ascii.h"
#include "health/link_flap_line.h"
#include "health/mce_line.h"
#include "health/pcie_aer_line.h"

namespace gcm::health {

namespace {

using K = KernelEventKind;
using S = XidSeverity;

// The project's own reading of each class. Severities follow the checks where one exists (an InfiniBand flap is
// CRITICAL and an Ethernet one WARNING in check-syslogs link-flaps; a fatal SXid CRITICAL and a non-fatal one
// WARNING in check-syslogs xid); corrected errors are warnings because only their rate says something.
constexpr KernelEventClass kClasses[] = {
    {K::SXid, "fatal", S::Critical,
     "an NVSwitch error the switch could not contain: the NVLink fabric through it is unusable until reset",
     "drain the node and reset its GPUs and NVSwitches (a reboot); a repeat is for the vendor"},
    {K::SXid, "non_fatal", S::Warn, "an NVSwitch error the switch corrected or contained (a link or port error)",
     "none now; a rate that grows points at the NVLink link or the switch to service"},
    {K::LinkDown, "infiniband", S::Critical, "an InfiniBand port lost its link: cable, transceiver, switch port or HCA",
     "check the port (ibstat, the switch side) and the cable; jobs that talk over it fail or slow down"},
    {K::LinkDown, "ethernet", S::Warn, "an Ethernet interface lost its carrier: cable, transceiver, switch port or NIC",
     "check the cable and the switch port if it repeats"},
    {K::LinkUp, "infiniband", S::Ignore, "the InfiniBand link came back",
     "none; downs and ups in turn are a flapping link"},
    {K::LinkUp, "ethernet", S::Ignore, "the Ethernet link came back",
     "none; downs and ups in turn are a flapping link"},
    {K::Mce, "corrected", S::Warn, "a CPU, cache or memory error that the hardware corrected",
     "none now; a growing rate points at a DIMM or CPU to replace (rasdaemon or mcelog decode the bank)"},
    {K::Mce, "uncorrected", S::Critical,
     "a CPU, cache or memory error the hardware could not correct; the kernel may have killed a process or taken "
     "a memory page offline",
     "drain the node, decode the bank (rasdaemon, mcelog --ascii) and replace the part"},
    {K::Mce, "fatal", S::Critical, "a machine check that corrupted the processor's context (the kernel panics on it)",
     "drain the node; the hardware needs service before it runs jobs again"},
    {K::Mce, "logged", S::Warn, "machine-check events the kernel handed to mcelog or rasdaemon (usually corrected)",
     "read them with rasdaemon (ras-mc-ctl --errors) or mcelog"},
    {K::Mce, "thermal", S::Warn, "a CPU above its temperature threshold: its clock was throttled",
     "check the node's cooling (fans, airflow, inlet temperature)"},
    {K::PcieAer, "corrected", S::Warn,
     "a PCIe error the link corrected by retrying: signal integrity of the slot, riser or cable",
     "none now; a growing rate points at the slot, riser or device (reseat, then replace)"},
    {K::PcieAer, "non_fatal", S::Critical, "a PCIe transaction failed though the link still works",
     "drain if it repeats; read the device driver's log, reseat or replace the device"},
    {K::PcieAer, "fatal", S::Critical, "the PCIe link failed: the device is unreachable until it is reset",
     "drain the node; reset or reboot, and service the slot or device if it repeats"},
};

KernelEvent make(K kind, std::string_view cls, std::string device, std::string_view message) {
  KernelEvent e;
  e.info = find_kernel_event_class(kind, cls);
  e.device = std::move(device);
  e.detail = std::string(message);
  return e;
}

// N of the "nvidia-nvswitchN" before `end`; -1 when the line names none.
int nvswitch_before(std::string_view message, size_t end) {
  size_t p = message.substr(0, end).rfind("nvswitch");
  if (p == std::string_view::npos) return -1;
  int v = -1;
  for (size_t i = p + 8; i < end && i < p + 14 && std::isdigit(static_cast<unsigned char>(message[i])); ++i)
    v = (v < 0 ? 0 : v * 10) + (message[i] - '0');
  return v;
}

}  // namespace

const char* to_string(KernelEventKind k) {
  switch (k) {
    case K::SXid:
      return "sxid";
    case K::LinkDown:
      return "link_down";
    case K::LinkUp:
      return "link_up";
    case K::Mce:
      return "mce";
    case K::PcieAer:
      return "pcie_aer";
  }
  return "sxid";
}

std::span<const KernelEventClass> kernel_event_classes() { return kClasses; }

const KernelEventClass* find_kernel_event_class(KernelEventKind kind, std::string_view cls) {
  for (const auto& c : kClasses)
    if (c.kind == kind && cls == c.cls) return &c;
  return nullptr;
}

std::optional<KernelEvent> classify_host_event(std::string_view message) {
  if (auto l = parse_link_flap_line(message))
    return make(l->change == LinkChange::Down ? K::LinkDown : K::LinkUp, to_string(l->kind), l->interface, message);
  if (auto m = parse_mce_line(message))
    return make(K::Mce, to_string(m->cls), m->cpu ? fmt::format("cpu{}", *m->cpu) : "", message);
  if (auto a = parse_pcie_aer_line(message))
    return make(K::PcieAer, to_string(a->cls), ascii_lower(a->device), message);
  return std::nullopt;
}

std::optional<KernelEvent> sxid_event(const XidLine& line, std::string_view message) {
  if (line.kind != XidKind::SXid || !line.code) return std::nullopt;
  std::string_view dev = line.device;
  if (dev.substr(0, 4) == "PCI:") dev.remove_prefix(4);
  KernelEvent e = make(K::SXid, line.fatal_hint ? "fatal" : "non_fatal", ascii_lower(dev), message);
  e.code = line.code;
  size_t at = message.find("SXid");
  e.nvswitch = nvswitch_before(message, at == std::string_view::npos ? message.size() : at);
  return e;
}

std::optional<KernelEvent> classify_kernel_event(std::string_view message) {
  if (auto x = parse_xid_line(message)) return sxid_event(*x, message);
  return classify_host_event(message);
}

}  // namespace gcm::health
