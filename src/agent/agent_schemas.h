// The records only the agent produces: its own cost and health per source, the export spool, GPUs allocated to a
// job but idle, and the verdicts of its in-process health checks. The GPU series themselves are nvml_monitor's
// (IndexedDeviceMetrics, GpuJobInfo), so dashboards work on either.
#pragma once

#include "core/record.h"

namespace gcm::agent {

// gcm_agent_cpu_seconds_total, gcm_agent_resident_memory_bytes, gcm_agent_samples_total, gcm_agent_windows_total,
// gcm_agent_nvml_up, gcm_agent_gpus, gcm_agent_last_sample_duration_seconds, gcm_agent_render_bytes.
extern const LazySchema kAgentSelf;
// Per source (nvml, kmsg, nvml_events, attribution, checks, otlp, state_file):
// gcm_agent_source_up{source}, gcm_agent_source_last_duration_seconds{source}, gcm_agent_source_errors_total{source},
// gcm_agent_source_timeouts_total{source}.
extern const LazySchema kAgentSource;
// gcm_agent_dropped_points_total, gcm_agent_spool_entries, gcm_agent_spool_bytes, gcm_agent_spool_oldest_age_seconds,
// gcm_agent_export_failures_total, gcm_agent_sent_points_total.
extern const LazySchema kAgentExport;
// gcm_gpu_allocated_idle{gpu,uuid,job_id}: 1 when the GPU belongs to a job but was idle (no utilisation) for the
// whole window.
extern const LazySchema kGpuAllocatedIdle;
// gcm_health_check_status{check}: the Nagios code of the check's last run (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN).
extern const LazySchema kHealthCheckStatus;
// gcm_agent_drain_actions_total{action}
extern const LazySchema kAgentDrain;

}  // namespace gcm::agent
