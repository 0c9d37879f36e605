// The per-job report of `gcm jobstats`: what one job's GPUs did, per GPU and for the job, and the plain-language
// notes drawn from it. Built from a JobAllocation (sacct) and the job's series (Prometheus); rendered as text,
// JSON or HTML by report_*.h. Nothing here talks to a server, so tests build reports from hand-made series.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jobstats/job_steps.h"
#include "jobstats/prometheus_api.h"
#include "jobstats/sacct_jobs.h"

namespace gcm::jobstats {

// Mean and maximum of a gauge over the samples that had a value.
struct Summary {
  double mean = 0, max = 0;
  size_t samples = 0;
  bool has() const { return samples > 0; }
};

// A stretch of time in which a GPU's SM clock stayed below its busy peers' median.
struct SlowSpell {
  int64_t seconds = 0;        // time the GPU was slower than its peers by at least the threshold
  double mean_deviation = 0;  // mean of clock / peer median - 1 over that time (-0.18: 18 % slower)
  std::string cause;          // the clock event (throttle) or detector reason seen most in that time, "" if none
};

struct GpuReport {
  std::string cluster, node, gpu, uuid;
  int64_t seconds_seen = 0;  // time the job's gcm_gpu_job_info named this GPU
  Summary utilization_percent, memory_used_bytes, sm_clock_hertz, power_watts;
  double memory_total_bytes = 0;
  double energy_kwh = 0;
  bool energy_from_counter = false;  // the energy counter; false: power integrated over time
  double gpu_hours_used = 0;         // utilisation-weighted: a GPU at 50 % for an hour used half a GPU-hour
  int64_t throttled_seconds = 0;     // any slowdown clock event (not idle, not application clocks)
  std::map<std::string, int64_t> throttle_seconds;       // per clock event reason
  std::map<std::string, int64_t> xids;                   // XID code -> occurrences during the job
  int worst_health_state = 0;                            // 0 ok, 1 suspect, 2 degraded, 3 failed (detector)
  std::map<std::string, int64_t> health_reason_seconds;  // detector reason -> time it held
  std::optional<SlowSpell> slow;
  std::vector<Point> utilization, sm_clock;  // the timelines (for the HTML chart)
  std::set<int64_t> marked;  // instants it was slower than its peers or throttled by a slowdown (not the power cap)
  bool idle_whole_job() const { return utilization_percent.has() && utilization_percent.max < 1; }
  std::string name() const { return "GPU " + gpu + " on " + node; }
};

struct JobReport {
  JobAllocation job;
  int64_t start = 0, end = 0;  // the span reported (end: now for a running job)
  int64_t step_seconds = 0;    // the resolution of the series
  std::string prometheus_url;
  std::vector<GpuReport> gpus;     // by node, then GPU index
  double gpu_hours_allocated = 0;  // sacct: GPUs x elapsed
  double gpu_hours_seen = 0;       // Prometheus: GPUs x time attributed to the job
  double gpu_hours_used = 0;       // utilisation-weighted
  double energy_kwh = 0;
  JobSteps steps;  // the step-time lane: empty for a job that does not report its steps
  std::vector<std::string> notes;
  int64_t elapsed() const { return end - start; }
};

// The series of one job, as fetched (see job_series.h): each metric's series carry the cluster, node and gpu labels.
struct JobSeries {
  std::vector<Series> job_info, utilization, memory_used, memory_total, sm_clock, power, energy, clock_events,
      health_state, health_reason, xid_errors;
  JobStepSeries steps;
};

// Thresholds of the notes, named so the README can say them.
struct NoteThresholds {
  double slow_ratio = 0.05;       // a GPU this much below its busy peers' median SM clock is slow
  double busy_percent = 50;       // only GPUs at least this busy are compared (an idle GPU clocks down)
  int64_t min_slow_seconds = 60;  // shorter slow stretches are noise, not worth a note
  double low_utilization_percent = 50;
};

// Builds the report: per GPU statistics over [start, end] at step, job totals, notes.
JobReport build_job_report(const JobAllocation& job, int64_t start, int64_t end, int64_t step, const JobSeries& series,
                           const NoteThresholds& thresholds = {});

// "a", "a and b", "a, b and c": lists in the notes.
std::string join_names(const std::vector<std::string>& names);

// "18 %", "40 min", "2.5 h": the wording of the notes and the text report.
std::string format_duration(int64_t seconds);

// "HW slowdown" for hw_slowdown and the other clock event and detector reason names; the name itself otherwise.
std::string plain_reason(const std::string& reason);

}  // namespace gcm::jobstats
