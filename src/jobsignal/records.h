// The job-signal series (docs/reference/job-signals.md, "Exported per job and node"): a bounded summary per job on
// the node, and the receiver's own counters.
#pragma once

#include "core/record.h"

namespace gcm::jobsignal {

// gcm_job_ranks{job_id}, gcm_job_steps_total, gcm_job_step_duration_seconds,
// gcm_job_compute_duration_seconds, gcm_job_slowest_compute_duration_seconds, gcm_job_slowest_rank, gcm_job_slowest_gpu,
// gcm_job_collective_duration_seconds, gcm_job_tokens_per_second.
extern const LazySchema kJobStepSummary;
// Per job with a step-time reference: gcm_job_slowdown_events_total{job_id} (confirmed slowdowns),
// gcm_job_step_time_ratio{job_id} (the window's step time over the reference), gcm_job_slowed{job_id} (0/1).
extern const LazySchema kJobSlowdownState;
// The job's last slowdown (one series each per job, replaced by the next): gcm_job_slowdown_change_time_seconds,
// gcm_job_slowdown_rise_ratio, gcm_job_slowdown_rank, gcm_job_slowdown_gpu, gcm_job_slowdown_cause_gpu, and
// gcm_job_slowdown_info{job_id, hardware_cause} 1; `gcm jobstats` reads them.
extern const LazySchema kJobSlowdownLast;
// LOG: one per confirmed slowdown or recovery, with the explanation.
extern const LazySchema kJobSlowdownEvent;
// gcm_jobsignal_requests_total, gcm_jobsignal_points_total, gcm_jobsignal_points_ignored_total,
// gcm_jobsignal_claims_ignored_total, gcm_jobsignal_jobs.
extern const LazySchema kJobSignalReceiver;
// gcm_jobsignal_requests_refused_total{why}
extern const LazySchema kJobSignalRefused;
// gcm_jobsignal_points_dropped_total{why}
extern const LazySchema kJobSignalDropped;

}  // namespace gcm::jobsignal
