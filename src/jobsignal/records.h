// The job-signal series (docs/reference/job-signals.md, "Exported per job and node"): a bounded summary per job on
// the node, and the receiver's own counters.
#pragma once

#include "core/record.h"

namespace gcm::jobsignal {

// gcm_job_ranks{job_id}, gcm_job_steps_total, gcm_job_step_duration_seconds,
// gcm_job_slowest_compute_duration_seconds, gcm_job_slowest_rank, gcm_job_slowest_gpu,
// gcm_job_collective_duration_seconds, gcm_job_tokens_per_second.
extern const LazySchema kJobStepSummary;
// gcm_jobsignal_requests_total, gcm_jobsignal_points_total, gcm_jobsignal_points_ignored_total,
// gcm_jobsignal_claims_ignored_total, gcm_jobsignal_jobs.
extern const LazySchema kJobSignalReceiver;
// gcm_jobsignal_requests_refused_total{why}
extern const LazySchema kJobSignalRefused;
// gcm_jobsignal_points_dropped_total{why}
extern const LazySchema kJobSignalDropped;

}  // namespace gcm::jobsignal
