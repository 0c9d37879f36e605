#include "jobstats/job_report.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "gpu/gpu_sample.h"

namespace gcm::jobstats {

namespace {

using Key = std::tuple<std::string, std::string, std::string>;  // cluster, node, gpu

Key key_of(const Series& s) { return {s.label("cluster"), s.label("node"), s.label("gpu")}; }

Summary summarize(const std::vector<Point>& points) {
  Summary s;
  double sum = 0;
  for (const auto& p : points) {
    if (!std::isfinite(p.v)) continue;
    sum += p.v;
    s.max = s.samples == 0 ? p.v : std::max(s.max, p.v);
    ++s.samples;
  }
  if (s.samples) s.mean = sum / static_cast<double>(s.samples);
  return s;
}

// The increase of a counter over the points: positive steps summed, a drop (driver reload) counted from zero.
// first_counts: the series began inside the job (a counter that appears with its first event), so its first value
// is itself an increase.
double counter_increase(const std::vector<Point>& points, bool first_counts) {
  double inc = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    if (i == 0) {
      if (first_counts) inc += points[0].v;
      continue;
    }
    double d = points[i].v - points[i - 1].v;
    inc += d >= 0 ? d : points[i].v;
  }
  return inc;
}

// Clock event reasons that slow a GPU down. gpu_idle, applications_clocks_setting, sync_boost and
// display_clock_setting are states, not throttling.
bool is_slowdown(const std::string& name) {
  return name == "sw_power_cap" || name == "hw_slowdown" || name == "sw_thermal_slowdown" ||
         name == "hw_thermal_slowdown" || name == "hw_power_brake_slowdown";
}

std::vector<std::string> slowdown_names(double mask) {
  std::vector<std::string> out;
  if (!std::isfinite(mask) || mask < 0) return out;
  for (auto& n : clock_event_reason_names(static_cast<uint64_t>(mask)))
    if (is_slowdown(n)) out.push_back(n);
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string percent(double ratio) { return fmt::format("{:.0f} %", std::abs(ratio) * 100); }

// Per time and GPU: the value of each series at that instant.
using Grid = std::map<int64_t, std::map<Key, double>>;
Grid grid_of(const std::vector<Series>& series) {
  Grid g;
  for (const auto& s : series)
    for (const auto& p : s.points) g[p.t][key_of(s)] = p.v;
  return g;
}

void find_slow_spells(std::map<Key, GpuReport>& gpus, const JobSeries& js, int64_t step, const NoteThresholds& th) {
  Grid util = grid_of(js.utilization), clock = grid_of(js.sm_clock), events = grid_of(js.clock_events);
  std::map<int64_t, std::map<Key, std::vector<std::string>>> reasons;  // detector reasons that held
  for (const auto& s : js.health_reason)
    for (const auto& p : s.points)
      if (p.v >= 1) reasons[p.t][key_of(s)].push_back(s.label("reason"));
  struct Acc {
    std::vector<int64_t> times;
    int64_t seconds = 0;
    double deviation_sum = 0;
    size_t samples = 0;
    std::map<std::string, int> causes;
  };
  std::map<Key, Acc> acc;
  for (const auto& [t, clocks] : clock) {
    std::vector<std::pair<Key, double>> busy;
    for (const auto& [k, c] : clocks) {
      auto u = util.find(t);
      if (u == util.end()) continue;
      auto uk = u->second.find(k);
      if (uk != u->second.end() && uk->second >= th.busy_percent && c > 0) busy.emplace_back(k, c);
    }
    if (busy.size() < 2) continue;  // nothing to compare with
    for (size_t i = 0; i < busy.size(); ++i) {
      std::vector<double> peers;
      for (size_t j = 0; j < busy.size(); ++j)
        if (j != i) peers.push_back(busy[j].second);
      double dev = busy[i].second / median(peers) - 1;
      if (dev > -th.slow_ratio) continue;
      Acc& a = acc[busy[i].first];
      a.seconds += step;
      a.times.push_back(t);
      a.deviation_sum += dev;
      ++a.samples;
      if (auto e = events.find(t); e != events.end())
        if (auto ek = e->second.find(busy[i].first); ek != e->second.end())
          for (auto& n : slowdown_names(ek->second)) ++a.causes[n];
      if (auto r = reasons.find(t); r != reasons.end())
        if (auto rk = r->second.find(busy[i].first); rk != r->second.end())
          for (auto& n : rk->second)
            if (n != "peer_slow") ++a.causes[n];  // peer_slow restates the finding, it is no cause
    }
  }
  for (auto& [k, a] : acc) {
    if (a.seconds < th.min_slow_seconds) continue;
    SlowSpell s;
    s.seconds = a.seconds;
    s.mean_deviation = a.deviation_sum / static_cast<double>(a.samples);
    int best = 0;
    for (const auto& [n, c] : a.causes)
      if (c > best) best = c, s.cause = n;
    gpus[k].slow = s;
    gpus[k].marked.insert(a.times.begin(), a.times.end());
  }
}

void add_notes(JobReport& r, const NoteThresholds& th) {
  auto& notes = r.notes;
  if (r.gpus.empty()) {
    notes.push_back(fmt::format(
        "Prometheus has no GPU series for job {} (gcm_gpu_job_info{{job_id=\"{}\"}}): either the job used no GPU, "
        "or no gcm agent / nvml_monitor on its nodes ({}) was scraped while it ran.",
        r.job.job_id, r.job.job_id, r.job.node_list.empty() ? "none" : r.job.node_list));
    return;
  }
  if (r.job.gpus > static_cast<int64_t>(r.gpus.size()))
    notes.push_back(
        fmt::format("sacct allocated {} GPUs; Prometheus has series for {} of them.", r.job.gpus, r.gpus.size()));
  std::vector<std::string> idle;
  for (const auto& g : r.gpus)
    if (g.idle_whole_job()) idle.push_back(g.name());
  if (!idle.empty()) {
    std::string which = idle.size() <= 4 ? " (" + join_names(idle) + ")" : "";
    if (idle.size() == r.gpus.size())
      notes.push_back(
          fmt::format("All {} GPUs were idle for the whole job: it allocated GPUs it did not use.", idle.size()));
    else
      notes.push_back(fmt::format("{} of {} GPUs {} idle for the whole job{}.", idle.size(), r.gpus.size(),
                                  idle.size() == 1 ? "was" : "were", which));
  }
  for (const auto& g : r.gpus) {
    if (g.slow)
      notes.push_back(fmt::format("{} ran {} slower than the job's other GPUs for {}{}.", g.name(),
                                  percent(g.slow->mean_deviation), format_duration(g.slow->seconds),
                                  g.slow->cause.empty() ? "" : ": " + plain_reason(g.slow->cause)));
    for (const auto& [reason, secs] : g.throttle_seconds) {
      bool explained = g.slow && g.slow->cause == reason;
      // sw_power_cap is a GPU working at its power limit: normal under load, shown in the table only.
      if (reason != "sw_power_cap" && !explained && secs >= th.min_slow_seconds)
        notes.push_back(
            fmt::format("{} was throttled for {}: {}.", g.name(), format_duration(secs), plain_reason(reason)));
    }
    for (const auto& [xid, n] : g.xids)
      notes.push_back(fmt::format("XID {} on {} ({} time{}).", xid, g.name(), n, n == 1 ? "" : "s"));
    if (g.worst_health_state >= 2) {
      std::vector<std::string> why;
      for (const auto& [reason, secs] : g.health_reason_seconds)
        why.push_back(plain_reason(reason) + " " + format_duration(secs));
      notes.push_back(fmt::format("The node agent judged {} {} during the job{}.", g.name(),
                                  g.worst_health_state >= 3 ? "failed" : "degraded",
                                  why.empty() ? "" : " (" + join_names(why) + ")"));
    }
  }
  double seen = r.gpu_hours_seen;
  if (seen > 0 && idle.size() < r.gpus.size()) {
    double busy = r.gpu_hours_used / seen * 100;
    if (busy < th.low_utilization_percent)
      notes.push_back(
          fmt::format("The GPUs were busy {:.0f} % of the time on average: {:.2f} of {:.2f} GPU-hours "
                      "allocated were used.",
                      busy, r.gpu_hours_used, r.gpu_hours_allocated));
  }
  double max_mem = 0, total = 0;
  for (const auto& g : r.gpus)
    if (g.memory_used_bytes.has() && g.memory_total_bytes > 0) {
      max_mem = std::max(max_mem, g.memory_used_bytes.max / g.memory_total_bytes);
      total = g.memory_total_bytes;
    }
  if (total > 0 && max_mem < 0.25 && idle.size() < r.gpus.size())
    notes.push_back(
        fmt::format("At most {} of a GPU's memory was used ({:.1f} of {:.0f} GiB): a GPU with less "
                    "memory or a MIG slice would do.",
                    percent(max_mem), max_mem * total / (1 << 30), total / (1 << 30)));
}

}  // namespace

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

std::string format_duration(int64_t s) {
  if (s < 120) return fmt::format("{} s", s);
  if (s < 2 * 3600) return fmt::format("{} min", (s + 30) / 60);
  return fmt::format("{:.1f} h", static_cast<double>(s) / 3600);
}

std::string plain_reason(const std::string& r) {
  static const std::map<std::string, std::string> kPlain = {
      {"hw_slowdown", "HW slowdown"},
      {"hw_thermal_slowdown", "HW thermal slowdown"},
      {"hw_thermal", "HW thermal slowdown"},
      {"hw_power_brake_slowdown", "HW power brake"},
      {"power_brake", "HW power brake"},
      {"sw_thermal_slowdown", "SW thermal slowdown"},
      {"sw_thermal", "SW thermal slowdown"},
      {"sw_power_cap", "at its power cap"},
      {"clock_drop", "its SM clock fell with no clock event reason set"},
      {"pcie_aer", "PCIe AER errors"},
      {"peer_slow", "slower than its peers"},
      {"pcie_degraded", "PCIe link degraded"},
      {"pcie_replays", "PCIe replays"},
      {"nvlink_errors", "NVLink errors"},
      {"ecc_dbe", "double-bit ECC errors"},
      {"row_remap_pending", "row remap pending"},
      {"row_remap_failure", "row remap failed"},
      {"xid", "XID"},
      {"lost", "GPU lost"},
      {"not_responding", "not responding"},
      {"rank_slow", "its rank slower than the job's other ranks"},
  };
  auto it = kPlain.find(r);
  return it == kPlain.end() ? r : it->second;
}

JobReport build_job_report(const JobAllocation& job, int64_t start, int64_t end, int64_t step, const JobSeries& js,
                           const NoteThresholds& th) {
  JobReport r;
  r.job = job;
  r.start = start;
  r.end = end;
  r.step_seconds = step;
  std::map<Key, GpuReport> gpus;
  auto gpu = [&](const Series& s) -> GpuReport& {
    GpuReport& g = gpus[key_of(s)];
    if (g.node.empty()) {
      g.cluster = s.label("cluster");
      g.node = s.label("node");
      g.gpu = s.label("gpu");
    }
    if (g.uuid.empty()) g.uuid = s.label("uuid");
    return g;
  };
  for (const auto& s : js.job_info) gpu(s).seconds_seen += static_cast<int64_t>(s.points.size()) * step;
  for (const auto& s : js.utilization) {
    auto& g = gpu(s);
    g.utilization_percent = summarize(s.points);
    g.utilization = s.points;
    for (const auto& p : s.points)
      if (std::isfinite(p.v)) g.gpu_hours_used += std::clamp(p.v, 0.0, 100.0) / 100 * static_cast<double>(step) / 3600;
  }
  for (const auto& s : js.memory_used) gpu(s).memory_used_bytes = summarize(s.points);
  for (const auto& s : js.memory_total) gpu(s).memory_total_bytes = summarize(s.points).max;
  for (const auto& s : js.sm_clock) {
    gpu(s).sm_clock_hertz = summarize(s.points);
    gpu(s).sm_clock = s.points;
  }
  for (const auto& s : js.power) {
    auto& g = gpu(s);
    g.power_watts = summarize(s.points);
    if (!g.energy_from_counter) {
      double joules = 0;
      for (const auto& p : s.points)
        if (std::isfinite(p.v)) joules += p.v * static_cast<double>(step);
      g.energy_kwh = joules / 3.6e6;
    }
  }
  for (const auto& s : js.energy)
    if (s.points.size() >= 2) {
      auto& g = gpu(s);
      g.energy_kwh = counter_increase(s.points, false) / 3.6e6;
      g.energy_from_counter = true;
    }
  for (const auto& s : js.clock_events)
    for (const auto& p : s.points) {
      auto names = slowdown_names(p.v);
      if (names.empty()) continue;
      auto& g = gpu(s);
      g.throttled_seconds += step;
      for (auto& n : names) {
        g.throttle_seconds[n] += step;
        if (n != "sw_power_cap") g.marked.insert(p.t);
      }
    }
  for (const auto& s : js.health_state)
    for (const auto& p : s.points)
      if (std::isfinite(p.v)) gpu(s).worst_health_state = std::max(gpu(s).worst_health_state, static_cast<int>(p.v));
  for (const auto& s : js.health_reason)
    for (const auto& p : s.points)
      if (p.v >= 1) gpu(s).health_reason_seconds[s.label("reason")] += step;
  for (const auto& s : js.xid_errors) {
    if (s.points.empty()) continue;
    // A GPU's XID counter is exported from its first XID on: a series that starts after the job's first instant
    // was created by an XID during the job, and its first value counts.
    bool began_inside = s.points.front().t > start + step;
    auto n = static_cast<int64_t>(std::llround(counter_increase(s.points, began_inside)));
    if (n > 0) gpu(s).xids[s.label("xid")] += n;
  }
  find_slow_spells(gpus, js, step, th);
  for (auto& [k, g] : gpus) r.gpus.push_back(std::move(g));
  // Node names sort as text; GPU indexes as numbers (GPU 10 after GPU 9).
  std::stable_sort(r.gpus.begin(), r.gpus.end(), [](const GpuReport& a, const GpuReport& b) {
    if (a.cluster != b.cluster) return a.cluster < b.cluster;
    if (a.node != b.node) return a.node < b.node;
    if (a.gpu.size() != b.gpu.size()) return a.gpu.size() < b.gpu.size();
    return a.gpu < b.gpu;
  });
  r.gpu_hours_allocated = static_cast<double>(job.gpus) * static_cast<double>(end - start) / 3600;
  for (const auto& g : r.gpus) {
    r.gpu_hours_seen += static_cast<double>(g.seconds_seen) / 3600;
    r.gpu_hours_used += g.gpu_hours_used;
    r.energy_kwh += g.energy_kwh;
  }
  r.steps = build_job_steps(job.job_id, js.steps);
  add_notes(r, th);
  // The slowdowns the node agents confirmed, in words, after the GPU notes (which say more of a GPU named there).
  for (const auto& d : r.steps.slowdowns) r.notes.push_back(d.sentence);
  return r;
}

}  // namespace gcm::jobstats
