#include "agent/kernel_event_records.h"

#include "core/schema.h"

namespace gcm::agent {

namespace {

using FT = FieldType;
using FR = FieldRole;

Schema make_events() {
  return make_schema(
      "NodeKernelEvents",
      "Hardware events in the kernel log other than GPU XIDs, per kind, class and device, since the agent started "
      "(it reads the kernel log since boot at start).",
      "node", DataType::Metric,
      {{"kind", FT::String, FR::Identity, "", "sxid, link_down, link_up, mce or pcie_aer"},
       {"class", FT::String, FR::Identity, "",
        "within the kind: fatal/non_fatal (sxid), infiniband/ethernet (links), corrected/uncorrected/fatal/logged/"
        "thermal (mce), corrected/non_fatal/fatal (pcie_aer)"},
       {"device", FT::String, FR::Identity, "",
        "PCI address, network interface or cpuN; \"\" when the line names none"},
       {"events", FT::Int, FR::Counter, "", "events seen since the agent started", "node_kernel_events"},
       {"last_timestamp", FT::Double, FR::Gauge, "seconds", "Unix time of the last one",
        "node_kernel_events_last_timestamp"}});
}

Schema make_sxid() {
  return make_schema(
      "NvswitchSxidErrors", "NVSwitch SXids per switch and code since the agent started (from the kernel log).",
      "nvswitch", DataType::Metric,
      {{"nvswitch", FT::Int, FR::Identity, "", "N of the nvidia-nvswitchN that reported it (-1: not named)"},
       {"pci_bus_id", FT::String, FR::Identity, "", "the NVSwitch's PCI address"},
       {"sxid", FT::Int, FR::Identity, "", "SXid code"},
       {"errors", FT::Int, FR::Counter, "", "SXids seen since the agent started", "nvswitch_sxid_errors"},
       {"last_timestamp", FT::Double, FR::Gauge, "seconds", "Unix time of the last one",
        "nvswitch_sxid_last_timestamp"}});
}

Schema make_kernel_event_schema() {
  return make_schema("NodeKernelEvent",
                     "One hardware event of the kernel log (not a GPU XID) with what it likely means.",
                     "node_kernel_event", DataType::Log,
                     {{"kind", FT::String, FR::Attribute, "", "sxid, link_down, link_up, mce or pcie_aer"},
                      {"class", FT::String, FR::Attribute, "", "the class within the kind (see NodeKernelEvents)"},
                      {"device", FT::String, FR::Attribute, "", "PCI address, network interface or cpuN"},
                      {"nvswitch", FT::Int, FR::Attribute, "", "sxid: N of nvidia-nvswitchN"},
                      {"sxid", FT::Int, FR::Attribute, "", "sxid: its code"},
                      {"time", FT::Double, FR::Attribute, "seconds", "Unix time of the event"},
                      {"severity", FT::String, FR::Attribute, "", "critical, warn or ignore (informational)"},
                      {"cause", FT::String, FR::Attribute, "", "what the event likely means"},
                      {"action", FT::String, FR::Attribute, "", "what to do about it"},
                      {"detail", FT::String, FR::Attribute, "", "the kernel log line"}});
}

}  // namespace

constinit const LazySchema kNodeKernelEvents{make_events};
constinit const LazySchema kNvswitchSxidErrors{make_sxid};
constinit const LazySchema kNodeKernelEvent{make_kernel_event_schema};

static const bool kKernelEventRecordsRegistered =
    register_schema(&kNodeKernelEvents) && register_schema(&kNvswitchSxidErrors) && register_schema(&kNodeKernelEvent);

}  // namespace gcm::agent
