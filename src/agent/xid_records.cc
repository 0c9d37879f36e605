#include "agent/xid_records.h"

#include "core/schema.h"

namespace gcm::agent {

namespace {

using FT = FieldType;
using FR = FieldRole;

// gpu, uuid and xid, then the given fields.
std::vector<FieldSpec> key_fields(std::vector<FieldSpec> more) {
  std::vector<FieldSpec> f = {
      {"gpu", FT::Int, FR::Identity, "", "GPU index (-1: a bus id NVML did not list)"},
      {"uuid", FT::String, FR::Identity, "", "GPU UUID (\"unknown\" when not known)"},
      {"xid", FT::Int, FR::Identity, "", "XID code"},
  };
  f.insert(f.end(), more.begin(), more.end());
  return f;
}

Schema make_errors() {
  return make_schema(
      "GpuXidErrors", "XIDs per GPU and code since the agent started (kernel log and NVML events, de-duplicated).",
      "gpu", DataType::Metric,
      key_fields({{"errors", FT::Int, FR::Counter, "", "XIDs seen since the agent started", "gpu_xid_errors"},
                  {"last_timestamp", FT::Double, FR::Gauge, "seconds", "Unix time of the last XID",
                   "gpu_xid_last_timestamp"}}));
}

Schema make_active() {
  return make_schema(
      "GpuXidActive",
      "Whether an XID still calls for its action (1) or was cleared (0): by a GPU reset, a reboot or an hour without "
      "a repeat, as its catalogue action says.",
      "gpu", DataType::Metric,
      key_fields({{"action", FT::String, FR::Identity, "", "the catalogue's immediate action (RESET_GPU, ...)"},
                  {"active", FT::Int, FR::Gauge, "", "1 while the XID is active, 0 once cleared", "gpu_xid_active"},
                  {"clears_on", FT::String, FR::Attribute, "", "gpu_reset, reboot or window"},
                  {"critical", FT::Bool, FR::Attribute, "", "the catalogue's severity is critical"}}));
}

Schema make_xid_event_schema() {
  std::vector<FieldSpec> fields = key_fields({

      {"pci_bus_id", FT::String, FR::Attribute, "", "PCI bus id (domain:bus:device)"},
      {"time", FT::Double, FR::Attribute, "seconds", "Unix time of the XID"},
      {"source", FT::String, FR::Attribute, "", "kmsg (the kernel log) or nvml (NVML's event API)"},
      {"severity", FT::String, FR::Attribute, "", "the catalogue's severity: critical, warn or ignore"},
      {"causes", FT::List, FR::Attribute, "", "possible causes (HW Error, Driver Error, User App Error, ...)"},
      {"mnemonic", FT::String, FR::Attribute, "", "NVIDIA's name for the XID"},
      {"description", FT::String, FR::Attribute, "", "what the XID means"},
      {"immediate_action", FT::String, FR::Attribute, "", "NVIDIA's immediate action (UNKNOWN: none known)"},
      {"investigatory_action", FT::String, FR::Attribute, "", "NVIDIA's investigatory action"},
      {"clears_on", FT::String, FR::Attribute, "", "gpu_reset, reboot or window: what ends its active state"},
      {"detail", FT::String, FR::Attribute, "", "the kernel log line's text after the code"},
  });
  for (auto& f : fields) f.role = FR::Attribute;  // a LOG row: no series
  return make_schema("GpuXidEvent", "One XID as it happened, with what the catalogue says of it.", "gpu_xid",
                     DataType::Log, std::move(fields));
}

}  // namespace

constinit const LazySchema kGpuXidErrors{make_errors};
constinit const LazySchema kGpuXidActive{make_active};
constinit const LazySchema kGpuXidEvent{make_xid_event_schema};

static const bool kXidRecordsRegistered =
    register_schema(&kGpuXidErrors) && register_schema(&kGpuXidActive) && register_schema(&kGpuXidEvent);

}  // namespace gcm::agent
