// The PromQL of one job's GPU series: every device series joined to the job through gcm_gpu_job_info (the
// recording rules' form, deploy/prometheus/rules/gcm-recording.yml), asked as range queries over the job's span.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "jobstats/job_report.h"
#include "jobstats/prometheus_api.h"

namespace gcm::jobstats {

// gcm_gpu_job_info{job_id="<id>"[,cluster="<c>"]}: the GPUs attributed to the job.
std::string job_info_selector(std::string_view job_id, std::string_view cluster);

// `<job_info> * on(cluster, node, gpu) group_left(uuid) <metric>`: the metric for the job's GPUs, only while they
// were the job's. For one series per GPU (utilisation, clocks, power, ...). Both sides are reduced to one series
// per GPU first (max by): a node scraped by both gcm agent and nvml_monitor has two of each, which a plain join
// refuses ("many-to-many matching not allowed").
std::string job_metric_expr(const std::string& job_info, std::string_view metric);

// The same for metrics with several series per GPU that are told apart by `label` (health reasons by reason, XIDs
// by xid), which keep it.
std::string job_labelled_metric_expr(const std::string& job_info, std::string_view metric, std::string_view label);

// A step that keeps every series under Prometheus's 11 000 points (and at most about 1 000, so the report stays
// quick), never below min_step (a scrape interval: finer steps only repeat samples).
int64_t choose_step(int64_t start, int64_t end, int64_t min_step);

// Runs the queries over [start, end]. Throws PrometheusError.
JobSeries fetch_job_series(PrometheusApi& api, std::string_view job_id, std::string_view cluster, int64_t start,
                           int64_t end, int64_t step);

}  // namespace gcm::jobstats
