#include "detector/health_records.h"

#include "core/schema.h"

namespace gcm::detector {

namespace {

using FT = FieldType;
using FR = FieldRole;

// Field names compose with the "gpu" prefix and units into the contract names (core/schema.cc
// prometheus_metric_name): health_state -> gcm_gpu_health_state, peer_deviation + ratio ->
// gcm_gpu_peer_deviation_ratio. No metric_name override, so OTLP names read gcm.gpu.health_state and so on.
// A per-GPU METRIC schema: the gpu and uuid labels, then the given fields.
Schema metric_schema(std::string name, std::string description, std::vector<FieldSpec> fields) {
  fields.insert(fields.begin(),
                {{"gpu", FT::Int, FR::Identity, "", "GPU index"}, {"uuid", FT::String, FR::Identity, "", "GPU UUID"}});
  return make_schema(std::move(name), std::move(description), "gpu", DataType::Metric, std::move(fields));
}

Schema make_state() {
  return metric_schema("GpuHealthState", "The zombie-GPU detector's state of each GPU.",
                       {{"health_state", FT::Int, FR::Gauge, "", "GPU health: 0 ok, 1 suspect, 2 degraded, 3 failed"},
                        {"state", FT::String, FR::Attribute, "", "the state by name"},
                        {"job_id", FT::String, FR::Attribute, "", "the job on the GPU (\"\": none)"}});
}

Schema make_reason() {
  return metric_schema(
      "GpuHealthReason", "Why a GPU is not ok, one series per reason of the fixed vocabulary.",
      {{"reason", FT::String, FR::Identity, "", "reason from the fixed vocabulary (docs/reference/detector.md)"},
       {"health_reason", FT::Int, FR::Gauge, "", "1 while the reason holds, else 0"}});
}

Schema make_deviation() {
  return metric_schema(
      "GpuPeerDeviation", "A GPU against the median of its job's other GPUs on the node, per signal.",
      {{"signal", FT::String, FR::Identity, "", "sm_clock, power or gpu_util"},
       {"peer_deviation", FT::Double, FR::Gauge, "ratio",
        "deviation from the peers' median, corrected for the GPU's usual deviation in this job"},
       {"peer_zscore", FT::Double, FR::Gauge, "", "robust z-score against the peers (MAD with a floor)"}});
}

Schema make_health_event_schema() {
  Schema s;
  s.name = "GpuHealthEvent";
  s.description = "A GPU's health state changed (zombie-GPU detector), with the evidence.";
  s.metric_prefix = "gpu";
  s.data_type = DataType::Log;
  s.fields = {
      {"hostname", FT::String, FR::Attribute, "", "host name"},
      {"gpu", FT::Int, FR::Attribute, "", "GPU index"},
      {"uuid", FT::String, FR::Attribute, "", "GPU UUID"},
      {"job_id", FT::String, FR::Attribute, "", "the job on the GPU (\"\": none)"},
      {"time", FT::Int, FR::Attribute, "", "end of the window, Unix seconds"},
      {"from_state", FT::String, FR::Attribute, "", "state before"},
      {"to_state", FT::String, FR::Attribute, "", "state after"},
      {"health_state", FT::Int, FR::Attribute, "", "state after: 0 ok, 1 suspect, 2 degraded, 3 failed"},
      {"reasons", FT::String, FR::Attribute, "", "active reasons, comma-separated"},
      {"flagged_windows", FT::Int, FR::Attribute, "", "flagged windows among the last degrade_n"},
      {"peers", FT::Int, FR::Attribute, "", "peers compared with (0: none)"},
      {"sm_clock_ratio", FT::Double, FR::Attribute, "", "SM clock over its maximum (window mean)"},
      {"sm_clock_peer_median", FT::Double, FR::Attribute, "", "the peers' median of the same"},
      {"sm_clock_deviation", FT::Double, FR::Attribute, "", "baseline-corrected deviation from the median"},
      {"sm_clock_raw_deviation", FT::Double, FR::Attribute, "", "deviation from the median"},
      {"sm_clock_zscore", FT::Double, FR::Attribute, "", "robust z-score"},
      {"power_deviation", FT::Double, FR::Attribute, "", "power over limit: corrected deviation"},
      {"power_zscore", FT::Double, FR::Attribute, "", "power: robust z-score"},
      {"gpu_util_deviation", FT::Double, FR::Attribute, "", "utilisation: corrected deviation"},
      {"gpu_util_zscore", FT::Double, FR::Attribute, "", "utilisation: robust z-score"},
      {"evidence", FT::String, FR::Attribute, "", "the evidence, one line"},
  };
  return s;
}

}  // namespace

constinit const LazySchema kGpuHealthState{make_state};
constinit const LazySchema kGpuHealthReason{make_reason};
constinit const LazySchema kGpuPeerDeviation{make_deviation};
constinit const LazySchema kGpuHealthEvent{make_health_event_schema};

static const bool kHealthRecordsRegistered = register_schema(&kGpuHealthState) && register_schema(&kGpuHealthReason) &&
                                             register_schema(&kGpuPeerDeviation) && register_schema(&kGpuHealthEvent);

void append_health_metrics(const std::vector<GpuVerdict>& verdicts, std::vector<Record>& out) {
  for (const auto& v : verdicts) {
    Record st(kGpuHealthState);
    st[0] = v.gpu;
    st[1] = v.uuid;
    st[2] = static_cast<int64_t>(v.state);
    st[3] = to_string(v.state);
    st[4] = v.job_id;
    out.push_back(std::move(st));
    for (int i = 0; i < kReasonCount; ++i) {
      auto r = static_cast<Reason>(i);
      Record rr(kGpuHealthReason);
      rr[0] = v.gpu;
      rr[1] = v.uuid;
      rr[2] = reason_name(r);
      rr[3] = int64_t{v.reasons.has(r) ? 1 : 0};
      out.push_back(std::move(rr));
    }
    for (int s = 0; s < kSignalCount; ++s) {
      const auto& d = v.signals[static_cast<size_t>(s)];
      if (!d.evaluated) continue;
      Record dr(kGpuPeerDeviation);
      dr[0] = v.gpu;
      dr[1] = v.uuid;
      dr[2] = signal_name(static_cast<Signal>(s));
      dr[3] = d.deviation;
      dr[4] = d.zscore;
      out.push_back(std::move(dr));
    }
  }
}

void append_health_events(const std::vector<GpuVerdict>& verdicts, const std::string& hostname,
                          std::vector<Record>& out) {
  for (const auto& v : verdicts) {
    if (!v.event) continue;
    const HealthEvent& e = *v.event;
    Record r(kGpuHealthEvent);
    auto set = [&](std::string_view f, Value x) { r.at(f) = std::move(x); };
    set("hostname", hostname);
    set("gpu", v.gpu);
    set("uuid", v.uuid);
    set("job_id", v.job_id);
    set("time", v.end_unix_ms / 1000);
    set("from_state", to_string(e.from));
    set("to_state", to_string(e.to));
    set("health_state", static_cast<int64_t>(e.to));
    set("reasons", e.reasons.to_string());
    set("flagged_windows", e.flagged_windows);
    set("peers", e.peers);
    const auto& sm = v.signals[static_cast<size_t>(Signal::SmClock)];
    if (sm.evaluated) {
      set("sm_clock_ratio", sm.value);
      set("sm_clock_peer_median", sm.peer_median);
      set("sm_clock_deviation", sm.deviation);
      set("sm_clock_raw_deviation", sm.raw_deviation);
      set("sm_clock_zscore", sm.zscore);
    }
    const auto& pw = v.signals[static_cast<size_t>(Signal::Power)];
    if (pw.evaluated) {
      set("power_deviation", pw.deviation);
      set("power_zscore", pw.zscore);
    }
    const auto& ut = v.signals[static_cast<size_t>(Signal::GpuUtil)];
    if (ut.evaluated) {
      set("gpu_util_deviation", ut.deviation);
      set("gpu_util_zscore", ut.zscore);
    }
    set("evidence", e.evidence);
    out.push_back(std::move(r));
  }
}

}  // namespace gcm::detector
