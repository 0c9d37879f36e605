// The step-time lane of `gcm jobstats`: what the job's own signal says of its pace (docs/reference/job-signals.md),
// per node: its step time over the job, and each slowdown the node agent confirmed with the cause it found. Read
// from the agent's per-job series (gcm_job_step_duration_seconds, gcm_job_step_time_ratio, gcm_job_slowdown_*),
// which exist only for jobs that report their steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jobstats/prometheus_api.h"

namespace gcm::jobstats {

struct JobStepSeries {
  std::vector<Series> step_duration, step_ratio, slowed, change_time, rise, rank, gpu, cause_gpu, info;
  std::vector<Series> slowest_compute;  // gcm_job_slowest_compute_duration_seconds: the node's slowest rank
};

struct NodeSteps {
  std::string cluster, node;
  std::vector<Point> step_seconds;  // the node's step time (median over its ranks)
  std::vector<Point> ratio;         // over the job's reference on the node (1.09: 9 % slower)
  double mean_step_seconds = 0;
};

// One slowdown of the job. In a synchronous job every node's agent sees the step time rise at once; they are one
// slowdown here, told by the node that found a hardware cause (without one, the node whose slowest rank computed
// longest: the straggler's node, as a stalled data loader makes it), and `nodes` names them all.
struct JobSlowdown {
  std::string cluster, node;
  std::vector<std::string> nodes;
  int64_t change_time = 0;     // when the step time rose, Unix seconds
  int64_t recovered_time = 0;  // when it was back (0: not within the report)
  double rise = 0;             // 0.09: 9 %
  int64_t rank = -1;
  int gpu = -1;
  int cause_gpu = -1;  // the GPU of the finding
  std::string cause;  // the finding's kind ("none": no hardware cause on the job's GPUs)
  double slowest_compute = 0;  // the node's slowest rank's compute time when it was found, s (0: not reported)
  std::string sentence;
};

struct JobSteps {
  std::vector<NodeSteps> nodes;
  std::vector<JobSlowdown> slowdowns;  // by change time
  bool empty() const { return nodes.empty(); }
};

// The queries, for the job's span (selector: {job_id="...",cluster="..."}).
JobStepSeries fetch_job_step_series(PrometheusApi& api, const std::string& selector, int64_t start, int64_t end,
                                    int64_t step);

// `same_within`: slowdowns of the nodes whose change times are this close are one (two agent windows by default).
JobSteps build_job_steps(const std::string& job_id, const JobStepSeries& s, int64_t same_within = 120);

}  // namespace gcm::jobstats
