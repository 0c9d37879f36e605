#include "agent/window_state.h"

#include <fmt/format.h>

namespace gcm::agent {

namespace {

const char* presence_name(detector::Presence p) {
  return p == detector::Presence::Ok ? "ok" : p == detector::Presence::NotResponding ? "not_responding" : "lost";
}

GpuStateEntry gpu_state_entry(const detector::GpuWindow& w, const detector::GpuVerdict* v, const XidTracker& xids,
                              double end_s) {
  GpuStateEntry e;
  e.gpu = w.gpu;
  e.uuid = w.uuid;
  e.job_id = w.job_id;
  e.presence = presence_name(w.presence);
  if (v) {
    e.health = static_cast<Health>(static_cast<int>(v->state));
    for (int r = 0; r < detector::kReasonCount; ++r)
      if (v->reasons.has(static_cast<detector::Reason>(r)))
        e.reasons.push_back(detector::reason_name(static_cast<detector::Reason>(r)));
    e.evidence = v->evidence;
  }
  for (const auto& x : xids.active_for_gpu(static_cast<int>(w.gpu), end_s)) e.active_xids.push_back(x.code);
  return e;
}

}  // namespace

AgentState window_state(const WindowFacts& facts, const std::map<std::string, CheckResult>& checks,
                        const std::vector<detector::GpuWindow>& summaries,
                        const std::vector<detector::GpuVerdict>& verdicts, const XidTracker& xids,
                        const std::vector<NodeStateEntry>& node) {
  AgentState st;
  st.written_unix_ms = facts.end_unix_ms;
  st.window_seconds = facts.window_s;
  st.hostname = facts.hostname;
  st.driver_version = facts.driver_version;
  st.nvml_error = facts.nvml_error;
  st.gpu_library = facts.gpu_library;
  if (!facts.nvml_error.empty()) st.problems.push_back(facts.gpu_library + " unavailable: " + facts.nvml_error);
  for (const auto& [name, r] : checks) {
    st.checks.push_back({name, r.code, r.message, static_cast<int64_t>(r.end * 1000)});
    if (r.code == 2) st.problems.push_back(fmt::format("check '{}': {}", name, r.message));
  }
  double end_s = static_cast<double>(facts.end_unix_ms) / 1000.0;
  for (size_t i = 0; i < summaries.size(); ++i) {
    GpuStateEntry e = gpu_state_entry(summaries[i], i < verdicts.size() ? &verdicts[i] : nullptr, xids, end_s);
    if (e.health >= Health::Degraded)
      st.problems.push_back(fmt::format("GPU {} {}: {}", e.gpu, to_string(e.health), e.evidence));
    st.gpus.push_back(std::move(e));
  }
  st.node = node;
  for (const auto& n : node)
    st.problems.push_back(fmt::format("node {} ({}): {}", to_string(n.health), n.reason, n.evidence));
  return st;
}

}  // namespace gcm::agent
