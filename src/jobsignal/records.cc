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
          {"compute_duration", FT::Double, FR::Gauge, "seconds",
           "median over ranks of their median compute time (step time where compute is not reported)"},
          {"slowest_compute_duration", FT::Double, FR::Gauge, "seconds",
           "the slowest rank's median compute time (its step time when compute is not reported)"},
          {"slowest_rank", FT::Int, FR::Gauge, "", "the slowest rank (-1: not numbered by Slurm or the launcher)"},
          {"slowest_gpu", FT::Int, FR::Gauge, "", "NVML index of the slowest rank's GPU (-1: unknown)"},
          {"collective_duration", FT::Double, FR::Gauge, "seconds",
           "median over ranks of their mean NCCL collective time (NCCL Inspector)"},
          {"tokens_per_second", FT::Double, FR::Gauge, "", "tokens of the job's ranks on the node per second"},
      });
}};

constinit const LazySchema kJobSlowdownState{[] {
  return make_schema(
      "JobSlowdownState", "Per job on the node, once per window: its step time against its own reference.", "job",
      DataType::Metric,
      {
          {"job_id", FT::String, FR::Identity, "", "Slurm job id"},
          {"slowdown_events", FT::Int, FR::Counter, "", "slowdowns of the job's step time confirmed on this node"},
          {"step_time_ratio", FT::Double, FR::Gauge, "",
           "the window's step time over the job's reference (1.12: 12 % slower; while slowed, the pre-slowdown one)"},
          {"slowed", FT::Int, FR::Gauge, "", "1 from a confirmed slowdown to its recovery"},
      });
}};

constinit const LazySchema kJobSlowdownLast{[] {
  // The explanation's sentence is free text: it travels in the JobSlowdownEvent LOG record, never in a label. Here
  // the finding's kind (a short fixed list) labels the info series, and the rest are numbers.
  Schema s = make_schema(
      "JobSlowdownLast", "The job's last confirmed slowdown on the node, as numbers and its cause's kind.",
      "job_slowdown", DataType::Metric,
      {
          {"job_id", FT::String, FR::Identity, "", "Slurm job id"},
          {"hardware_cause", FT::String, FR::Attribute, "",
           "the best finding's kind (hw_thermal, power_brake, hw_slowdown, sw_thermal, sw_power_cap, clock_drop, xid, "
           "nvlink_errors, pcie_aer, pcie_replays), none without one"},
          {"change_time", FT::Int, FR::Gauge, "seconds", "when the step time rose (the end of that window), Unix time"},
          {"rise", FT::Double, FR::Gauge, "ratio", "the rise of the step time (0.12: 12 %)"},
          {"rank", FT::Int, FR::Gauge, "", "the rank named, the slowest (-1: none)"},
          {"gpu", FT::Int, FR::Gauge, "", "NVML index of its GPU (-1: unknown)"},
          {"cause_gpu", FT::Int, FR::Gauge, "", "NVML index of the GPU of the best finding (-1: none)"},
      });
  s.info_labels = {"hardware_cause"};
  return s;
}};

constinit const LazySchema kJobSlowdownEvent{[] {
  return make_schema(
      "JobSlowdownEvent", "A job's step time rose lastingly (or recovered) on this node, with the hardware evidence.",
      "job", DataType::Log,
      {
          {"hostname", FT::String, FR::Attribute, "", "host name"},
          {"job_id", FT::String, FR::Attribute, "", "Slurm job id"},
          {"kind", FT::String, FR::Attribute, "", "slowdown or recovery"},
          {"time", FT::Int, FR::Attribute, "", "when it was confirmed (end of the window), Unix seconds"},
          {"change_time", FT::Int, FR::Attribute, "", "when the step time moved (end of that window), Unix seconds"},
          {"step_time_before", FT::Double, FR::Attribute, "seconds", "the reference step time"},
          {"step_time_after", FT::Double, FR::Attribute, "seconds", "the step time since the change"},
          {"rise", FT::Double, FR::Attribute, "ratio", "step_time_after / step_time_before - 1"},
          {"rank", FT::Int, FR::Attribute, "", "the rank named (the slowest; -1: none)"},
          {"gpu", FT::Int, FR::Attribute, "", "its GPU's NVML index (-1: unknown)"},
          {"hardware_causes", FT::String, FR::Attribute, "",
           "the findings, best first, as gpu:kind, comma-separated (\"\": no hardware cause found)"},
          {"explanation", FT::String, FR::Attribute, "", "the sentence"},
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
