#include "jobsignal/records.h"

#include "core/schema.h"

namespace gcm::jobsignal {
namespace {

using FT = FieldType;
using FR = FieldRole;

}  // namespace

constinit const LazySchema kJobStepSummary{[] {
  return make_schema(
      "JobStepSummary", "Per job on the node, once per window: what its ranks reported of their steps.", "job",
      DataType::Metric,
      {
          {"job_id", FT::String, FR::Identity, "", "Slurm job id"},
          {"ranks", FT::Int, FR::Gauge, "", "ranks that reported in the window"},
          {"steps", FT::Int, FR::Counter, "", "steps reported by the job's ranks on the node"},
          {"step_duration", FT::Double, FR::Gauge, "seconds", "median over ranks of their median step wall time"},
          {"slowest_compute_duration", FT::Double, FR::Gauge, "seconds",
           "the slowest rank's median compute time (its step time when compute is not reported)"},
          {"slowest_rank", FT::Int, FR::Gauge, "", "the slowest rank (-1: not numbered by Slurm or the launcher)"},
          {"slowest_gpu", FT::Int, FR::Gauge, "", "NVML index of the slowest rank's GPU (-1: unknown)"},
          {"collective_duration", FT::Double, FR::Gauge, "seconds",
           "median over ranks of their mean NCCL collective time (NCCL Inspector)"},
          {"tokens_per_second", FT::Double, FR::Gauge, "", "tokens of the job's ranks on the node per second"},
      });
}};

constinit const LazySchema kJobSignalReceiver{[] {
  return make_schema("JobSignalReceiver", "The agent's local endpoint for the jobs' own signal.", "jobsignal",
                     DataType::Metric,
                     {
                         {"requests", FT::Int, FR::Counter, "", "requests received"},
                         {"points", FT::Int, FR::Counter, "", "job-signal points taken"},
                         {"points_ignored", FT::Int, FR::Counter, "", "points of other metrics, ignored"},
                         {"claims_ignored", FT::Int, FR::Counter, "",
                          "requests naming a job other than their sender's (the claim is ignored)"},
                         {"jobs", FT::Int, FR::Gauge, "", "jobs tracked"},
                     });
}};

constinit const LazySchema kJobSignalRefused{[] {
  return make_schema("JobSignalRefused", "Requests the job-signal endpoint refused, by why.", "jobsignal",
                     DataType::Metric,
                     {
                         {"why", FT::String, FR::Identity, "",
                          "unknown_sender, wrong_owner, too_large, bad_request, job_limit, rank_limit, not_found"},
                         {"requests_refused", FT::Int, FR::Counter, "", "requests refused"},
                     });
}};

constinit const LazySchema kJobSignalDropped{[] {
  return make_schema("JobSignalDropped", "Job-signal points dropped from requests otherwise taken, by why.",
                     "jobsignal", DataType::Metric,
                     {
                         {"why", FT::String, FR::Identity, "", "bad_value, rank_window_full"},
                         {"points_dropped", FT::Int, FR::Counter, "", "points dropped"},
                     });
}};

}  // namespace gcm::jobsignal
