#include "jobstats/job_series.h"

#include <algorithm>

#include <fmt/format.h>

namespace gcm::jobstats {

std::string job_info_selector(std::string_view job_id, std::string_view cluster) {
  std::string sel = "gcm_gpu_job_info{job_id=" + promql_string(job_id);
  if (!cluster.empty()) sel += ",cluster=" + promql_string(cluster);
  return sel + "}";
}

std::string job_metric_expr(const std::string& job_info, std::string_view metric) {
  return fmt::format(
      "max by (cluster, node, gpu) ({}) * on(cluster, node, gpu) group_left(uuid) "
      "max by (cluster, node, gpu, uuid) ({})",
      job_info, metric);
}

std::string job_labelled_metric_expr(const std::string& job_info, std::string_view metric, std::string_view label) {
  return fmt::format(
      "max by (cluster, node, gpu, {}) ({}) * on(cluster, node, gpu) group_left() "
      "max by (cluster, node, gpu) ({})",
      label, metric, job_info);
}

int64_t choose_step(int64_t start, int64_t end, int64_t min_step) {
  int64_t span = std::max<int64_t>(end - start, 1);
  int64_t step = (span + 999) / 1000;
  return std::max(step, std::max<int64_t>(min_step, 1));
}

JobSeries fetch_job_series(PrometheusApi& api, std::string_view job_id, std::string_view cluster, int64_t start,
                           int64_t end, int64_t step) {
  std::string info = job_info_selector(job_id, cluster);
  auto range = [&](const std::string& expr) { return api.query_range(expr, start, end, step); };
  auto metric = [&](std::string_view m) { return range(job_metric_expr(info, m)); };
  JobSeries s;
  // max by GPU: one series per GPU even when its job_info labels changed during the job (a new uuid label).
  s.job_info = range("max by (cluster, node, gpu, uuid) (" + info + ")");
  if (s.job_info.empty()) return s;  // nothing more to find: the report says so
  s.utilization = metric("gcm_gpu_utilization_percent");
  s.memory_used = metric("gcm_gpu_memory_used_bytes");
  s.memory_total = metric("gcm_gpu_memory_total_bytes");
  s.sm_clock = metric("gcm_gpu_clock_sm_hertz");
  s.power = metric("gcm_gpu_power_watts");
  s.energy = metric("gcm_gpu_energy_joules_total");
  s.clock_events = metric("gcm_gpu_clock_event_reasons");
  s.health_state = metric("gcm_gpu_health_state");
  s.health_reason = range(job_labelled_metric_expr(info, "gcm_gpu_health_reason", "reason"));
  s.xid_errors = range(job_labelled_metric_expr(info, "gcm_gpu_xid_errors_total", "xid"));
  std::string selector = "{job_id=" + promql_string(job_id) + (cluster.empty() ? "" : ",cluster=" + promql_string(cluster)) + "}";
  s.steps = fetch_job_step_series(api, selector, start, end, step);
  return s;
}

}  // namespace gcm::jobstats
