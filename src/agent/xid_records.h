// The schemas of the agent's XID records (agent/xid_tracker.h). Their Prometheus names are a contract with
// dashboards and alerts: gcm_gpu_xid_errors_total, gcm_gpu_xid_last_timestamp_seconds, gcm_gpu_xid_active.
#pragma once

#include "core/schema.h"

namespace gcm::agent {

extern const LazySchema kGpuXidErrors;  // METRIC {gpu,uuid,xid}: errors (counter), last_timestamp (gauge, seconds)
extern const LazySchema kGpuXidActive;  // METRIC {gpu,uuid,xid,action}: active (gauge, 1 or 0)
extern const LazySchema kGpuXidEvent;   // LOG: one counted XID with the catalogue's causes and actions

}  // namespace gcm::agent
