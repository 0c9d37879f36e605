// The schemas of the agent's kernel-event records (agent/kernel_events.h): the node's hardware events in the kernel
// log other than GPU XIDs. Their Prometheus names are a contract with dashboards and alerts, next to
// gcm_gpu_xid_errors_total:
//   gcm_node_kernel_events_total{kind,class,device}                 counter
//   gcm_node_kernel_events_last_timestamp_seconds{kind,class,device}  gauge
//   gcm_nvswitch_sxid_errors_total{nvswitch,pci_bus_id,sxid}        counter
//   gcm_nvswitch_sxid_last_timestamp_seconds{nvswitch,pci_bus_id,sxid}  gauge
#pragma once

#include "core/schema.h"

namespace gcm::agent {

extern const LazySchema kNodeKernelEvents;    // METRIC {kind,class,device}: events (counter), last_timestamp (gauge)
extern const LazySchema kNvswitchSxidErrors;  // METRIC {nvswitch,pci_bus_id,sxid}: errors (counter), last_timestamp
extern const LazySchema kNodeKernelEvent;     // LOG: one event with its severity, likely cause and action

}  // namespace gcm::agent
