#include "agent/agent_schemas.h"

#include "core/schema.h"

namespace gcm::agent {
namespace {

using FT = FieldType;
using FR = FieldRole;

Schema metric_schema(const char* name, const char* description, const char* prefix, std::vector<FieldSpec> fields) {
  return make_schema(name, description, prefix, DataType::Metric, std::move(fields));
}

}  // namespace

constinit const LazySchema kAgentSelf{[] {
  return metric_schema(
      "AgentSelf", "What `gcm agent` itself costs and sees, once per window.", "agent",
      {
          {"hostname", FT::String, FR::Attribute, "", "host name"},
          {"cpu", FT::Double, FR::Counter, "seconds", "CPU time the agent used (user + system)", "agent_cpu"},
          {"resident_memory", FT::Int, FR::Gauge, "bytes", "the agent's resident set size", "agent_resident_memory"},
          {"samples", FT::Int, FR::Counter, "", "samples of every GPU taken", "agent_samples"},
          {"windows", FT::Int, FR::Counter, "", "windows closed", "agent_windows"},
          {"nvml_up", FT::Int, FR::Gauge, "", "1 when NVML is loaded and answers, 0 while it is retried",
           "agent_nvml_up"},
          {"gpus", FT::Int, FR::Gauge, "", "GPUs NVML reports", "agent_gpus"},
          {"last_sample_duration", FT::Double, FR::Gauge, "seconds", "how long the last sample of every GPU took",
           "agent_last_sample_duration"},
          {"metrics_bytes", FT::Int, FR::Gauge, "bytes", "size of the last rendered /metrics page",
           "agent_metrics_size"},
      });
}};

constinit const LazySchema kAgentSource{[] {
  return metric_schema(
      "AgentSource", "Each source of the agent: is it working, what its last run cost, its errors and timeouts.",
      "agent_source",
      {
          {"source", FT::String, FR::Identity, "", "nvml, kmsg, nvml_events, attribution, checks, otlp, state_file, job_signals"},
          {"up", FT::Int, FR::Gauge, "", "1 when the source works", "agent_source_up"},
          {"last_duration", FT::Double, FR::Gauge, "seconds", "duration of its last run", "agent_source_last_duration"},
          {"errors", FT::Int, FR::Counter, "", "errors", "agent_source_errors"},
          {"timeouts", FT::Int, FR::Counter, "", "calls abandoned at their timeout", "agent_source_timeouts"},
          {"last_error", FT::String, FR::Attribute, "", "the last error"},
      });
}};

constinit const LazySchema kAgentExport{[] {
  return metric_schema(
      "AgentExport", "The OTLP push and its on-disk spool.", "agent",
      {
          {"sent_points", FT::Int, FR::Counter, "", "data points and log records the receiver accepted",
           "agent_sent_points"},
          {"dropped_points", FT::Int, FR::Counter, "",
           "data points and log records dropped: the spool was full (oldest first) or the receiver refused them",
           "agent_dropped_points"},
          {"export_failures", FT::Int, FR::Counter, "", "OTLP requests that failed (each is retried from the spool)",
           "agent_export_failures"},
          {"spool_entries", FT::Int, FR::Gauge, "", "windows waiting in the spool", "agent_spool_entries"},
          {"spool", FT::Int, FR::Gauge, "bytes", "size of the spool", "agent_spool"},
          {"spool_limit", FT::Int, FR::Gauge, "bytes",
           "--spool-max-bytes: past it the oldest windows are dropped (so alerts can compare the size with it)",
           "agent_spool_limit"},
          {"spool_oldest_age", FT::Double, FR::Gauge, "seconds", "age of the oldest window in the spool",
           "agent_spool_oldest_age"},
      });
}};

constinit const LazySchema kGpuAllocatedIdle{[] {
  return metric_schema("GpuAllocatedIdle", "GPUs that belong to a job but did no work for a whole window.", "gpu",
                       {
                           {"gpu", FT::Int, FR::Identity, "", "GPU index"},
                           {"uuid", FT::String, FR::Identity, "", "GPU UUID"},
                           {"job_id", FT::String, FR::Identity, "", "Slurm job id"},
                           {"allocated_idle", FT::Int, FR::Gauge, "", "1: allocated and idle for the whole window",
                            "gpu_allocated_idle"},
                       });
}};

constinit const LazySchema kHealthCheckStatus{[] {
  return metric_schema("HealthCheckStatus", "The last verdict of each health check the agent runs.", "health_check",
                       {
                           {"check", FT::String, FR::Identity, "", "the check's name in the suite file"},
                           {"status", FT::Int, FR::Gauge, "", "Nagios code: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN",
                            "health_check_status"},
                           {"message", FT::String, FR::Attribute, "", "the check's message"},
                       });
}};

constinit const LazySchema kAgentDrain{[] {
  return metric_schema("AgentDrain",
                       "What the agent's drain control did (`--drain`): drains, refusals, confirmations, resumes.",
                       "agent_drain",
                       {
                           {"action", FT::String, FR::Identity, "",
                            "drained, would_drain, already_drained, other_reason, over_budget, failed, confirm_passed, "
                            "confirm_failed, resumed"},
                           {"actions", FT::Int, FR::Counter, "", "times the action was taken", "agent_drain_actions"},
                       });
}};

static const bool kAgentSchemasRegistered = register_schema(&kAgentSelf) && register_schema(&kAgentSource) &&
                                            register_schema(&kAgentExport) && register_schema(&kGpuAllocatedIdle) &&
                                            register_schema(&kHealthCheckStatus) && register_schema(&kAgentDrain);

}  // namespace gcm::agent
