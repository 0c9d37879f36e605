#include "jobstats/job_steps.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "jobstats/job_report.h"

namespace gcm::jobstats {
namespace {

using NodeKey = std::pair<std::string, std::string>;  // cluster, node

NodeKey node_of(const Series& s) { return {s.label("cluster"), s.label("node")}; }

// The value a per-node series had at instant t (the last point at or before it), NaN without one.
double at(const std::vector<Series>& all, const NodeKey& node, int64_t t, const std::string& label = "",
          std::string* label_value = nullptr) {
  double best = NAN;
  int64_t best_t = INT64_MIN;
  for (const auto& s : all) {
    if (node_of(s) != node) continue;
    for (const auto& p : s.points)
      if (p.t <= t && p.t > best_t && std::isfinite(p.v)) {
        best_t = p.t;
        best = p.v;
        if (label_value) *label_value = s.label(label);
      }
  }
  return best;
}

std::string clock_of(int64_t t) { return fmt::format("{:%H:%M} UTC", fmt::gmtime(static_cast<std::time_t>(t))); }

bool has_cause(const JobSlowdown& d) { return !d.cause.empty() && d.cause != "none"; }

std::string sentence_of(const std::string& job_id, const JobSlowdown& d) {
  std::string s = fmt::format("Step time of job {} rose {:.0f} % at {} (seen on {})", job_id, d.rise * 100,
                              clock_of(d.change_time), join_names(d.nodes));
  if (d.rank >= 0 && d.gpu >= 0)
    s += fmt::format(": rank {} (GPU {} on {}) was its node's slowest", d.rank, d.gpu, d.node);
  else if (d.gpu >= 0)
    s += fmt::format(": GPU {} on {} was its node's slowest", d.gpu, d.node);
  if (!has_cause(d))
    s += "; no hardware cause found on the job's GPUs (software or data)";
  else if (d.cause_gpu >= 0)
    s += fmt::format("; the node agent found on GPU {} of {}: {}", d.cause_gpu, d.node, plain_reason(d.cause));
  else
    s += fmt::format("; the node agent found: {}", plain_reason(d.cause));
  s += d.recovered_time ? fmt::format("; back to its old pace at {}.", clock_of(d.recovered_time)) : ".";
  return s;
}

}  // namespace

JobStepSeries fetch_job_step_series(PrometheusApi& api, const std::string& selector, int64_t start, int64_t end,
                                    int64_t step) {
  auto range = [&](const std::string& metric, const std::string& by = "cluster, node") {
    return api.query_range(fmt::format("max by ({}) ({}{})", by, metric, selector), start, end, step);
  };
  JobStepSeries s;
  s.step_duration = range("gcm_job_step_duration_seconds");
  if (s.step_duration.empty()) return s;  // the job reports no steps: no lane
  s.step_ratio = range("gcm_job_step_time_ratio");
  s.slowed = range("gcm_job_slowed");
  s.change_time = range("gcm_job_slowdown_change_time_seconds");
  s.rise = range("gcm_job_slowdown_rise_ratio");
  s.rank = range("gcm_job_slowdown_rank");
  s.gpu = range("gcm_job_slowdown_gpu");
  s.cause_gpu = range("gcm_job_slowdown_cause_gpu");
  s.info = range("gcm_job_slowdown_info", "cluster, node, hardware_cause");
  s.slowest_compute = range("gcm_job_slowest_compute_duration_seconds");
  return s;
}

JobSteps build_job_steps(const std::string& job_id, const JobStepSeries& s, int64_t same_within) {
  JobSteps out;
  std::map<NodeKey, NodeSteps> nodes;
  for (const auto& series : s.step_duration) {
    NodeSteps& n = nodes[node_of(series)];
    n.cluster = series.label("cluster");
    n.node = series.label("node");
    n.step_seconds = series.points;
    double sum = 0;
    for (const auto& p : series.points) sum += p.v;
    if (!series.points.empty()) n.mean_step_seconds = sum / static_cast<double>(series.points.size());
  }
  for (const auto& series : s.step_ratio)
    if (auto it = nodes.find(node_of(series)); it != nodes.end()) it->second.ratio = series.points;
  for (auto& [k, n] : nodes) out.nodes.push_back(std::move(n));

  // One slowdown per distinct change time of a node; read the rest at the instant it first appeared.
  for (const auto& series : s.change_time) {
    NodeKey node = node_of(series);
    double last = NAN;
    for (const auto& p : series.points) {
      if (p.v == last) continue;
      last = p.v;
      JobSlowdown d;
      d.cluster = node.first;
      d.node = node.second;
      d.change_time = static_cast<int64_t>(p.v);
      d.rise = at(s.rise, node, p.t);
      double rank = at(s.rank, node, p.t), gpu = at(s.gpu, node, p.t), cause_gpu = at(s.cause_gpu, node, p.t);
      d.rank = std::isfinite(rank) ? static_cast<int64_t>(rank) : -1;
      d.gpu = std::isfinite(gpu) ? static_cast<int>(gpu) : -1;
      d.cause_gpu = std::isfinite(cause_gpu) ? static_cast<int>(cause_gpu) : -1;
      at(s.info, node, p.t, "hardware_cause", &d.cause);
      double slowest = at(s.slowest_compute, node, p.t);
      d.slowest_compute = std::isfinite(slowest) ? slowest : 0;
      out.slowdowns.push_back(std::move(d));
    }
  }
  // Recovered: gcm_job_slowed of the node back to 0 after the change.
  for (auto& d : out.slowdowns)
    for (const auto& series : s.slowed) {
      if (node_of(series) != NodeKey{d.cluster, d.node}) continue;
      bool was_slowed = false;
      for (const auto& p : series.points) {
        if (p.t < d.change_time) continue;
        if (p.v >= 1) was_slowed = true;
        if (was_slowed && p.v < 1 && !d.recovered_time) d.recovered_time = p.t;
      }
    }
  std::sort(out.slowdowns.begin(), out.slowdowns.end(), [](const JobSlowdown& a, const JobSlowdown& b) {
    return std::tie(a.change_time, a.node) < std::tie(b.change_time, b.node);
  });
  // The nodes' reports of one slowdown become one, told by a node that found a cause, else by the node of the
  // slowest rank: in a synchronous job every node's step time rises with the straggler's, and only its node's
  // slowest rank computes longer than the others'.
  std::vector<JobSlowdown> merged;
  for (auto& d : out.slowdowns) {
    if (!merged.empty() && d.change_time - merged.back().change_time <= same_within) {
      JobSlowdown& m = merged.back();
      m.nodes.push_back(d.node);
      m.recovered_time = m.recovered_time && d.recovered_time ? std::max(m.recovered_time, d.recovered_time) : 0;
      bool tells_better = has_cause(d) ? !has_cause(m) : !has_cause(m) && d.slowest_compute > m.slowest_compute;
      if (tells_better) {
        std::vector<std::string> seen_on = std::move(m.nodes);
        int64_t first = m.change_time, recovered = m.recovered_time;
        m = std::move(d);
        m.nodes = std::move(seen_on);
        m.change_time = first;
        m.recovered_time = recovered;
      }
      continue;
    }
    d.nodes = {d.node};
    merged.push_back(std::move(d));
  }
  out.slowdowns = std::move(merged);
  for (auto& d : out.slowdowns) d.sentence = sentence_of(job_id, d);
  return out;
}

}  // namespace gcm::jobstats
