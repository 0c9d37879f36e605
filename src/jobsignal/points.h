// The job-signal points of one OTLP metrics request (docs/reference/job-signals.md, "What a job sends"):
// gcm.job.step.duration, gcm.job.step.compute_duration and gcm.job.step.tokens, and NCCL Inspector's
// nccl_collective_exec_time_microseconds. Everything else in the request is counted as ignored, never refused, so
// an application exporting more through the OpenTelemetry SDK works unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace opentelemetry::proto::collector::metrics::v1 {
class ExportMetricsServiceRequest;
}

namespace gcm::jobsignal {

inline constexpr std::string_view kStepDuration = "gcm.job.step.duration";
inline constexpr std::string_view kStepComputeDuration = "gcm.job.step.compute_duration";
inline constexpr std::string_view kStepTokens = "gcm.job.step.tokens";
inline constexpr std::string_view kNcclCollectiveTime = "nccl_collective_exec_time_microseconds";

enum class PointKind { StepDuration, ComputeDuration, Tokens, CollectiveTime };

struct StepPoint {
  PointKind kind = PointKind::StepDuration;
  double sum = 0;      // seconds (durations, collective time converted from microseconds) or tokens
  uint64_t count = 1;  // steps (or collectives) the sum covers: 1 for a gauge, the histogram's count
  int gpu_ordinal = -1;  // an Inspector point's GPU<n>: the n-th visible device of the sender; -1 none
};

struct ExtractedPoints {
  std::vector<StepPoint> points;
  uint64_t ignored = 0;     // points of other metrics
  uint64_t bad_values = 0;  // negative, NaN, infinite, or a duration over a day
  // What the request says about its job (resource slurm.job.id, point slurm_job_id or job_id): never used to
  // attribute, only compared with the credentials.
  std::vector<std::string> claimed_jobs;
};

ExtractedPoints extract_points(const opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest& req);

}  // namespace gcm::jobsignal
