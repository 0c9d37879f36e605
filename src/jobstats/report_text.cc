// The terminal form of a job report: a header block like Princeton's jobstats (what researchers already read), a
// per-GPU table, then the notes.
#include <algorithm>
#include <ctime>

#include <fmt/format.h>

#include "jobstats/report_render.h"

namespace gcm::jobstats {

namespace {

std::string or_dash(const Summary& s, double scale, const char* fmtstr) {
  return s.has() ? fmt::format(fmt::runtime(fmtstr), s.mean * scale, s.max * scale) : "-";
}

std::string map_text(const std::map<std::string, int64_t>& m, bool as_duration) {
  std::string out;
  for (const auto& [k, v] : m)
    out += (out.empty() ? "" : ", ") + k + " " + (as_duration ? format_duration(v) : std::to_string(v));
  return out.empty() ? "-" : out;
}

const char* state_name(int s) {
  switch (s) {
    case 0:
      return "ok";
    case 1:
      return "suspect";
    case 2:
      return "degraded";
    default:
      return "failed";
  }
}

}  // namespace

std::string format_time_utc(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string render_text(const JobReport& r) {
  const auto& j = r.job;
  std::string o;
  o += std::string(72, '=') + "\n";
  o += fmt::format("{:^72}\n", "GPU job statistics (gcm jobstats)");
  o += std::string(72, '=') + "\n";
  o += fmt::format("{:>16}: {}\n", "Job ID", j.job_id_display.empty() ? j.job_id : j.job_id_display);
  o += fmt::format("{:>16}: {}\n", "Name", j.job_name);
  o += fmt::format("{:>16}: {} / {}\n", "User / account", j.user, j.account);
  o += fmt::format("{:>16}: {} ({})\n", "Partition", j.partition, j.cluster);
  o += fmt::format("{:>16}: {}{}\n", "State", j.state, j.running() ? " (figures up to now)" : "");
  o += fmt::format("{:>16}: {} ({})\n", "Nodes", j.nodes.size(), j.node_list);
  o += fmt::format("{:>16}: {}\n", "GPUs", j.gpus);
  o += fmt::format("{:>16}: {} ({} to {})\n", "Elapsed", format_duration(r.elapsed()), format_time_utc(r.start),
                   format_time_utc(r.end));
  double used_pct = r.gpu_hours_allocated > 0 ? r.gpu_hours_used / r.gpu_hours_allocated * 100 : 0;
  o += fmt::format("{:>16}: {:.2f} allocated, {:.2f} used ({:.0f} %); {:.2f} seen in Prometheus\n", "GPU-hours",
                   r.gpu_hours_allocated, r.gpu_hours_used, used_pct, r.gpu_hours_seen);
  o += fmt::format("{:>16}: {:.3f} kWh\n", "GPU energy", r.energy_kwh);
  o += "\n";
  if (!r.gpus.empty()) {
    o += fmt::format("{:<14} {:>3}  {:>9}  {:>15}  {:>11}  {:>9}  {:>7}  {:>9}  {:<8}\n", "node", "gpu", "util %",
                     "memory GiB", "SM MHz", "power W", "kWh", "throttled", "health");
    o += fmt::format("{:<14} {:>3}  {:>9}  {:>15}  {:>11}  {:>9}  {:>7}  {:>9}  {:<8}\n", "", "", "mean max",
                     "mean max/total", "mean max", "mean max", "", "", "");
    for (const auto& g : r.gpus) {
      std::string mem = g.memory_used_bytes.has()
                            ? fmt::format("{:.1f} {:.1f}/{:.0f}", g.memory_used_bytes.mean / (1 << 30),
                                          g.memory_used_bytes.max / (1 << 30), g.memory_total_bytes / (1 << 30))
                            : "-";
      o += fmt::format("{:<14} {:>3}  {:>9}  {:>15}  {:>11}  {:>9}  {:>7.3f}  {:>9}  {:<8}\n", g.node, g.gpu,
                       or_dash(g.utilization_percent, 1, "{:.0f} {:.0f}"), mem,
                       or_dash(g.sm_clock_hertz, 1e-6, "{:.0f} {:.0f}"), or_dash(g.power_watts, 1, "{:.0f} {:.0f}"),
                       g.energy_kwh, format_duration(g.throttled_seconds), state_name(g.worst_health_state));
    }
    bool details = false;
    for (const auto& g : r.gpus) {
      if (g.throttle_seconds.empty() && g.xids.empty() && g.health_reason_seconds.empty()) continue;
      if (!details) o += "\n";
      details = true;
      o += fmt::format("{}: throttle {}; XIDs {}; health reasons {}\n", g.name(), map_text(g.throttle_seconds, true),
                       map_text(g.xids, false), map_text(g.health_reason_seconds, true));
    }
    o += "\n";
  }
  if (!r.steps.empty()) {
    // The job's own pace: the lane of its step time per node, and the slowdowns (in the notes, with their cause).
    o += "Step time (the job's own signal, per node):\n";
    for (const auto& n : r.steps.nodes) {
      double worst = 1;
      for (const auto& p : n.ratio) worst = std::max(worst, p.v);
      size_t count = 0;
      for (const auto& d : r.steps.slowdowns) count += d.node == n.node && d.cluster == n.cluster;
      o += fmt::format("  {:<14} mean {:.3f} s, at most {:.0f} % over its usual pace, {} slowdown{}\n", n.node,
                       n.mean_step_seconds, (worst - 1) * 100, count, count == 1 ? "" : "s");
    }
    o += "\n";
  }
  o += "Notes:\n";
  if (r.notes.empty()) o += "  * Nothing unusual: every GPU was busy and kept pace with the others.\n";
  for (const auto& n : r.notes) o += "  * " + n + "\n";
  return o;
}

}  // namespace gcm::jobstats
