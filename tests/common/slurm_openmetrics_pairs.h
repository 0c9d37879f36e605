// The numbers slurm_monitor's SLURMLog record and slurmctld's own OpenMetrics (Slurm 25.11,
// MetricsType=metrics/openmetrics) both give and that agree by definition at the same moment, as
// docs/reference/collectors.md states them. The golden test (unit/collectors/slurm_monitor_openmetrics_test.cc)
// checks them on the recordings and the live test (integration/slurm_openmetrics_testbed_test.cc) on the testbed.
#pragma once

#include <vector>

namespace gcm::testing {

struct OpenMetricsPair {
  const char* field;     // of SLURMLog
  const char* endpoint;  // /metrics/<endpoint>
  const char* series;    // a series without labels
};

// Node counts (sinfo against slurmctld's node table) and the running jobs and their CPUs (sacct's window against
// slurmctld's job table: every running job overlaps any window).
inline const std::vector<OpenMetricsPair>& openmetrics_cluster_pairs() {
  static const std::vector<OpenMetricsPair> pairs = {
      {"nodes_total", "nodes", "slurm_nodes"},
      {"nodes_allocated", "nodes", "slurm_nodes_alloc"},
      {"nodes_mixed", "nodes", "slurm_nodes_mixed"},
      {"nodes_down", "nodes", "slurm_nodes_down"},
      {"nodes_drained", "nodes", "slurm_nodes_drained"},
      {"jobs_running", "jobs", "slurm_jobs_running"},
      {"total_cpus_alloc", "jobs", "slurm_jobs_cpus_alloc"},
  };
  return pairs;
}

// sdiag's statistics, which /metrics/scheduler serves from the same counters under other names. Not here:
// server_thread_count (sdiag's own RPC holds one more thread than the HTTP request does), bf_table_size_mean
// (`sdiag --json` fills it with the backfill queue length's mean), schedule_cycle_per_minute, parts_packed and the
// RPC tables (no series).
inline const std::vector<OpenMetricsPair>& openmetrics_sdiag_pairs() {
  static const std::vector<OpenMetricsPair> pairs = {
      {"agent_queue_size", "scheduler", "slurm_agent_queue_size"},
      {"agent_count", "scheduler", "slurm_agent_cnt"},
      {"agent_thread_count", "scheduler", "slurm_agent_thread_cnt"},
      {"dbd_agent_queue_size", "scheduler", "slurm_slurmdbd_queue_size"},
      {"schedule_cycle_max", "scheduler", "slurm_schedule_cycle_max"},
      {"schedule_cycle_mean", "scheduler", "slurm_sched_mean_cycle"},
      {"schedule_cycle_sum", "scheduler", "slurm_schedule_cycle_tot"},
      {"schedule_cycle_total", "scheduler", "slurm_schedule_cycle_cnt"},
      {"schedule_cycle_last", "scheduler", "slurm_schedule_cycle_last"},
      {"schedule_cycle_mean_depth", "scheduler", "slurm_sched_mean_depth_cycle"},
      {"schedule_cycle_depth", "scheduler", "slurm_schedule_cycle_depth"},
      {"schedule_queue_length", "scheduler", "slurm_schedule_queue_len"},
      {"schedule_exit_end_job_queue", "scheduler", "slurm_sched_exit_end"},
      {"schedule_exit_default_queue_depth", "scheduler", "slurm_sched_exit_max_depth"},
      {"schedule_exit_max_job_start", "scheduler", "slurm_sched_exit_max_job_start"},
      {"schedule_exit_max_rpc_cnt", "scheduler", "slurm_sched_exit_rpc_cnt"},
      {"schedule_exit_max_sched_time", "scheduler", "slurm_sched_exit_timeout"},
      {"schedule_exit_licenses", "scheduler", "slurm_sched_exit_lic"},
      {"sdiag_jobs_submitted", "scheduler", "slurm_sdiag_jobs_submitted"},
      {"sdiag_jobs_started", "scheduler", "slurm_sdiag_jobs_started"},
      {"sdiag_jobs_completed", "scheduler", "slurm_sdiag_jobs_completed"},
      {"sdiag_jobs_canceled", "scheduler", "slurm_sdiag_jobs_canceled"},
      {"sdiag_jobs_failed", "scheduler", "slurm_sdiag_jobs_failed"},
      {"sdiag_jobs_pending", "scheduler", "slurm_sdiag_jobs_pending"},
      {"sdiag_jobs_running", "scheduler", "slurm_sdiag_jobs_running"},
      {"job_states_ts", "scheduler", "slurm_sdiag_job_states_ts"},
      {"bf_backfilled_jobs", "scheduler", "slurm_backfilled_jobs"},
      {"bf_last_backfilled_jobs", "scheduler", "slurm_last_backfilled_jobs"},
      {"bf_backfilled_het_jobs", "scheduler", "slurm_backfilled_het_jobs"},
      {"bf_cycle_counter", "scheduler", "slurm_bf_cycle_cnt"},
      {"bf_cycle_mean", "scheduler", "slurm_bf_mean_cycle"},
      {"bf_cycle_sum", "scheduler", "slurm_bf_cycle_tot"},
      {"bf_cycle_max", "scheduler", "slurm_bf_cycle_max"},
      {"bf_cycle_last", "scheduler", "slurm_bf_cycle_last"},
      {"bf_depth_mean", "scheduler", "slurm_bf_depth_mean"},
      {"bf_depth_mean_try", "scheduler", "slurm_bf_try_depth_mean"},
      {"bf_depth_sum", "scheduler", "slurm_bf_depth_tot"},
      {"bf_depth_try_sum", "scheduler", "slurm_bf_depth_try_tot"},
      {"bf_last_depth", "scheduler", "slurm_bf_last_depth"},
      {"bf_last_depth_try", "scheduler", "slurm_bf_last_depth_try"},
      {"bf_queue_len", "scheduler", "slurm_bf_queue_len"},
      {"bf_queue_len_mean", "scheduler", "slurm_bf_queue_len_mean"},
      {"bf_queue_len_sum", "scheduler", "slurm_bf_queue_len_tot"},
      {"bf_table_size", "scheduler", "slurm_bf_table_size"},
      {"bf_table_size_sum", "scheduler", "slurm_bf_table_size_tot"},
      {"bf_when_last_cycle", "scheduler", "slurm_bf_when_last_cycle"},
      {"bf_exit_end_job_queue", "scheduler", "slurm_bf_exit_end"},
      {"bf_exit_max_job_start", "scheduler", "slurm_bf_exit_max_job_start"},
      {"bf_exit_max_job_test", "scheduler", "slurm_bf_exit_max_job_test"},
      {"bf_exit_max_time", "scheduler", "slurm_bf_exit_timeout"},
      {"bf_exit_node_space_size", "scheduler", "slurm_bf_exit_table_limit"},
      {"bf_exit_state_changed", "scheduler", "slurm_bf_exit_state_changed"},
      {"req_time_start", "scheduler", "slurm_last_proc_req_start"},
      {"gettimeofday_latency", "scheduler", "slurm_sdiag_latency"},
  };
  return pairs;
}

}  // namespace gcm::testing
