#include "jobstats/usage.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "jobstats/report_render.h"

namespace gcm::jobstats {

UsageBy parse_usage_by(const std::string& t) {
  if (t == "account") return UsageBy::Account;
  if (t == "user") return UsageBy::User;
  if (t == "partition") return UsageBy::Partition;
  throw std::invalid_argument("--by '" + t + "': expected account, user or partition");
}

const char* usage_by_name(UsageBy by) {
  switch (by) {
    case UsageBy::Account:
      return "account";
    case UsageBy::User:
      return "user";
    case UsageBy::Partition:
      return "partition";
  }
  return "account";
}

std::string usage_expr(int64_t since, int64_t until, int64_t step, const std::string& cluster) {
  // One series per GPU on each side (a node scraped twice would otherwise break the join), utilisation clamped to
  // 0..100. The range is one second short of the period: Prometheus 2 counts both ends of a subquery range.
  int64_t range = std::max<int64_t>(until - since - 1, step);
  return fmt::format(
      "sum by (job_id, user, account, partition) (sum_over_time(("
      "max by (cluster, node, gpu, job_id, user, account, partition) (gcm_gpu_job_info{}{}{})"
      " * on(cluster, node, gpu) group_left() "
      "clamp(max by (cluster, node, gpu) (gcm_gpu_utilization_percent), 0, 100))[{}s:{}s]))",
      cluster.empty() ? "" : "{cluster=", cluster.empty() ? "" : promql_string(cluster), cluster.empty() ? "" : "}",
      range, step);
}

std::map<std::string, JobUse> fetch_job_use(PrometheusApi& api, int64_t since, int64_t until, int64_t step,
                                            const std::string& cluster) {
  std::map<std::string, JobUse> out;
  for (const auto& s : api.query(usage_expr(since, until, step, cluster), until)) {
    if (s.points.empty() || !std::isfinite(s.points[0].v)) continue;
    JobUse& u = out[s.label("job_id")];
    u.gpu_hours_used += s.points[0].v * static_cast<double>(step) / 100 / 3600;
    u.user = s.label("user");
    u.account = s.label("account");
    u.partition = s.label("partition");
  }
  return out;
}

UsageReport build_usage(UsageBy by, int64_t since, int64_t until, const std::vector<JobAllocation>& jobs,
                        const std::map<std::string, JobUse>& use) {
  UsageReport u;
  u.by = by;
  u.since = since;
  u.until = until;
  auto group_of = [by](const std::string& user, const std::string& account, const std::string& partition) {
    return by == UsageBy::User ? user : by == UsageBy::Partition ? partition : account;
  };
  std::map<std::string, UsageRow> rows;
  std::set<std::string> listed;
  for (const auto& j : jobs) {
    if (!j.start) continue;  // never started: allocated nothing
    int64_t a = std::max(*j.start, since), b = std::min(j.end.value_or(until), until);
    double alloc = b > a ? static_cast<double>(j.gpus) * static_cast<double>(b - a) / 3600 : 0;
    auto it = use.find(j.job_id);
    double used = it == use.end() ? 0 : it->second.gpu_hours_used;
    if (alloc == 0 && used == 0) continue;
    listed.insert(j.job_id);
    UsageRow& r = rows[group_of(j.user, j.account, j.partition)];
    ++r.jobs;
    r.gpu_hours_allocated += alloc;
    r.gpu_hours_used += used;
  }
  for (const auto& [id, x] : use) {
    if (listed.count(id) || x.gpu_hours_used <= 0) continue;
    UsageRow& r = rows[group_of(x.user, x.account, x.partition)];
    ++r.jobs;
    r.gpu_hours_used += x.gpu_hours_used;
  }
  for (auto& [g, r] : rows) {
    r.group = g;
    u.total.jobs += r.jobs;
    u.total.gpu_hours_allocated += r.gpu_hours_allocated;
    u.total.gpu_hours_used += r.gpu_hours_used;
    u.rows.push_back(r);
  }
  u.total.group = "total";
  std::stable_sort(u.rows.begin(), u.rows.end(),
                   [](const UsageRow& a, const UsageRow& b) { return a.gpu_hours_allocated > b.gpu_hours_allocated; });
  return u;
}

namespace {
double share(const UsageRow& r) { return r.gpu_hours_allocated > 0 ? r.gpu_hours_used / r.gpu_hours_allocated : 0; }
}  // namespace

std::string render_usage_text(const UsageReport& u) {
  std::string o = fmt::format("GPU-hours by {} from {} to {}\n\n", usage_by_name(u.by), format_time_utc(u.since),
                              format_time_utc(u.until));
  o += fmt::format("{:<24} {:>6} {:>14} {:>14} {:>7}\n", usage_by_name(u.by), "jobs", "allocated", "used", "used %");
  auto line = [&](const UsageRow& r) {
    o += fmt::format("{:<24} {:>6} {:>14.2f} {:>14.2f} {:>7.0f}\n", r.group.empty() ? "(none)" : r.group, r.jobs,
                     r.gpu_hours_allocated, r.gpu_hours_used, share(r) * 100);
  };
  for (const auto& r : u.rows) line(r);
  o += std::string(69, '-') + "\n";
  line(u.total);
  return o;
}

nlohmann::json render_usage_json(const UsageReport& u) {
  auto row = [](const UsageRow& r) {
    return nlohmann::json{{"group", r.group},
                          {"jobs", r.jobs},
                          {"gpu_hours_allocated", r.gpu_hours_allocated},
                          {"gpu_hours_used", r.gpu_hours_used}};
  };
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : u.rows) rows.push_back(row(r));
  return {{"by", usage_by_name(u.by)}, {"since", u.since}, {"until", u.until}, {"rows", rows}, {"total", row(u.total)}};
}

std::string render_usage_csv(const UsageReport& u) {
  // RFC 4180 quoting: account names may hold commas.
  auto q = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string o = "\"";
    for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
    return o + "\"";
  };
  std::string o = fmt::format("{},jobs,gpu_hours_allocated,gpu_hours_used\n", usage_by_name(u.by));
  for (const auto& r : u.rows)
    o += fmt::format("{},{},{:.4f},{:.4f}\n", q(r.group), r.jobs, r.gpu_hours_allocated, r.gpu_hours_used);
  return o;
}

}  // namespace gcm::jobstats
