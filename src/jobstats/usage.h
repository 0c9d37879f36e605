// `gcm usage`: GPU-hours allocated (sacct: GPUs x the part of each job's run inside the period) and used
// (Prometheus: utilisation-weighted GPU time of the job's GPUs, through gcm_gpu_job_info) per account, user or
// partition over a period, for budget reports.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobstats/prometheus_api.h"
#include "jobstats/sacct_jobs.h"

namespace gcm::jobstats {

enum class UsageBy { Account, User, Partition };
// "account", "user", "partition"; throws std::invalid_argument naming the value and the choices.
UsageBy parse_usage_by(const std::string& text);
const char* usage_by_name(UsageBy by);

// GPU-hours used per job over the period, and the job's labels (for jobs sacct did not list).
struct JobUse {
  double gpu_hours_used = 0;
  std::string user, account, partition;
};

// The PromQL that gives, at `until`, each job's utilisation summed over the period at `step` (a subquery, so the
// figure does not depend on the scrape interval); multiply by step / 100 / 3600 for GPU-hours.
std::string usage_expr(int64_t since, int64_t until, int64_t step, const std::string& cluster = "");
// Runs it. Throws PrometheusError.
std::map<std::string, JobUse> fetch_job_use(PrometheusApi& api, int64_t since, int64_t until, int64_t step,
                                            const std::string& cluster = "");

struct UsageRow {
  std::string group;
  size_t jobs = 0;
  double gpu_hours_allocated = 0, gpu_hours_used = 0;
};

struct UsageReport {
  UsageBy by = UsageBy::Account;
  int64_t since = 0, until = 0;
  std::vector<UsageRow> rows;  // most GPU-hours allocated first
  UsageRow total;
};

// Joins sacct's allocations and Prometheus's use by job id. Jobs Prometheus saw but sacct did not list (another
// cluster's, or purged from accounting) count under their gcm_gpu_job_info labels, with nothing allocated.
UsageReport build_usage(UsageBy by, int64_t since, int64_t until, const std::vector<JobAllocation>& jobs,
                        const std::map<std::string, JobUse>& use);

std::string render_usage_text(const UsageReport& u);
nlohmann::json render_usage_json(const UsageReport& u);
std::string render_usage_csv(const UsageReport& u);

}  // namespace gcm::jobstats
