// The JSON form of a job report. Base units (bytes, hertz, watts, seconds) except energy (kWh, as budgets count
// it) and GPU-hours; times are Unix seconds. Timelines are left out: `--html` draws them, and Prometheus has them.
#include <cmath>

#include "jobstats/report_render.h"

namespace gcm::jobstats {

namespace {

nlohmann::json summary(const Summary& s) {
  if (!s.has()) return nullptr;
  return {{"mean", s.mean}, {"max", s.max}};
}

}  // namespace

nlohmann::json render_json(const JobReport& r) {
  const auto& j = r.job;
  nlohmann::json job = {
      {"job_id", j.job_id},     {"job_id_display", j.job_id_display}, {"name", j.job_name},   {"user", j.user},
      {"account", j.account},   {"partition", j.partition},           {"cluster", j.cluster}, {"state", j.state},
      {"running", j.running()}, {"node_list", j.node_list},           {"nodes", j.nodes},     {"gpus", j.gpus},
  };
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : r.gpus) {
    nlohmann::json x = {
        {"cluster", g.cluster},
        {"node", g.node},
        {"gpu", g.gpu},
        {"uuid", g.uuid},
        {"seconds_seen", g.seconds_seen},
        {"utilization_percent", summary(g.utilization_percent)},
        {"memory_used_bytes", summary(g.memory_used_bytes)},
        {"memory_total_bytes", g.memory_total_bytes > 0 ? nlohmann::json(g.memory_total_bytes) : nullptr},
        {"sm_clock_hertz", summary(g.sm_clock_hertz)},
        {"power_watts", summary(g.power_watts)},
        {"energy_kwh", g.energy_kwh},
        {"energy_source", g.energy_from_counter ? "energy counter" : "power over time"},
        {"gpu_hours_used", g.gpu_hours_used},
        {"throttled_seconds", g.throttled_seconds},
        {"throttle_seconds", g.throttle_seconds},
        {"xids", g.xids},
        {"worst_health_state", g.worst_health_state},
        {"health_reason_seconds", g.health_reason_seconds},
        {"idle_whole_job", g.idle_whole_job()},
        {"slow", nullptr},
    };
    if (g.slow)
      x["slow"] = {
          {"seconds", g.slow->seconds}, {"mean_deviation_ratio", g.slow->mean_deviation}, {"cause", g.slow->cause}};
    gpus.push_back(std::move(x));
  }
  nlohmann::json step_nodes = nlohmann::json::array(), slowdowns = nlohmann::json::array();
  for (const auto& n : r.steps.nodes) {
    nlohmann::json points = nlohmann::json::array(), ratio = nlohmann::json::array();
    for (const auto& p : n.step_seconds) points.push_back({p.t, p.v});
    for (const auto& p : n.ratio) ratio.push_back({p.t, p.v});
    step_nodes.push_back({{"cluster", n.cluster},
                          {"node", n.node},
                          {"mean_step_seconds", n.mean_step_seconds},
                          {"step_seconds", points},
                          {"step_time_ratio", ratio}});
  }
  for (const auto& d : r.steps.slowdowns)
    slowdowns.push_back({{"cluster", d.cluster},
                         {"node", d.node},
                         {"change_time", d.change_time},
                         {"recovered_time", d.recovered_time ? nlohmann::json(d.recovered_time) : nullptr},
                         {"rise_ratio", d.rise},
                         {"rank", d.rank},
                         {"gpu", d.gpu},
                         {"nodes", d.nodes},
                         {"hardware_cause", d.cause},
                         {"cause_gpu", d.cause_gpu},
                         {"explanation", d.sentence}});
  return {
      {"job", job},
      {"start", r.start},
      {"end", r.end},
      {"elapsed_seconds", r.elapsed()},
      {"step_seconds", r.step_seconds},
      {"prometheus_url", r.prometheus_url},
      {"totals",
       {{"gpu_hours_allocated", r.gpu_hours_allocated},
        {"gpu_hours_seen", r.gpu_hours_seen},
        {"gpu_hours_used", r.gpu_hours_used},
        {"energy_kwh", r.energy_kwh}}},
      {"gpus", gpus},
      {"step_time", {{"nodes", step_nodes}, {"slowdowns", slowdowns}}},
      {"notes", r.notes},
  };
}

}  // namespace gcm::jobstats
