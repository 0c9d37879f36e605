// JobSignals' job slowdowns: each window, every job's step time on the node into its change-point test
// (step_change.h); a confirmed change explained from the evidence of the job's GPUs (slowdown_explain.h) and said as
// a JobSlowdownEvent, in the agent's log, and in the per-job series.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <set>

#include "detector/peer_compare.h"
#include "jobsignal/job_signals.h"
#include "jobsignal/records.h"

namespace gcm::jobsignal {

void JobSignals::take_slowdowns(const std::vector<JobWindow>& jobs, const std::vector<detector::GpuWindow>& gpus,
                                WindowOutput& out) {
  int64_t window = ++windows_;
  explainer_.observe(window, gpus, out.judgements);
  int64_t now_ms = 0;
  for (const auto& g : gpus) now_ms = std::max(now_ms, g.end_unix_ms);
  if (!now_ms)
    now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                 .count();

  std::set<std::string> seen;
  for (const JobWindow& jw : jobs) {
    seen.insert(jw.job_id);
    std::vector<double> steps;
    std::vector<int> job_gpus;
    const RankWindow* slowest = nullptr;
    double slowest_value = -1;
    for (const RankWindow& r : jw.ranks) {
      if (r.step_duration) steps.push_back(*r.step_duration);
      if (r.gpu >= 0) job_gpus.push_back(r.gpu);
      std::optional<double> v = r.compute_duration ? r.compute_duration : r.step_duration;
      if (v && *v > slowest_value) {
        slowest_value = *v;
        slowest = &r;
      }
    }
    // A new job is admitted only while the store tracks it: the store's limits bound this map too.
    JobSlowdowns& js = slowdowns_[jw.job_id];
    js.silent = 0;
    std::optional<double> step;
    if (!steps.empty()) step = detector::median_in_place(steps.data(), steps.size());
    std::optional<StepChange> change = js.detector.observe(window, step);
    if (change) {
      SlowdownExplanation e = explainer_.explain(jw.job_id, *change, job_gpus, slowest ? slowest->rank : -1,
                                                 slowest ? slowest->gpu : -1,
                                                 opts_.node_name.empty() ? opts_.hostname : opts_.node_name);
      int64_t change_ms = explainer_.window_end_ms(change->change_window);
      std::string causes;
      for (const auto& f : e.findings) causes += fmt::format("{}{}:{}", causes.empty() ? "" : ",", f.gpu, f.kind);
      Record ev(kJobSlowdownEvent);
      ev.at("hostname") = opts_.hostname;
      ev.at("job_id") = jw.job_id;
      ev.at("kind") = change->kind == StepChange::Kind::Slowdown ? "slowdown" : "recovery";
      ev.at("time") = now_ms / 1000;
      ev.at("change_time") = (change_ms ? change_ms : now_ms) / 1000;
      ev.at("step_time_before") = change->before;
      ev.at("step_time_after") = change->after;
      ev.at("rise") = change->rise();
      ev.at("rank") = e.rank;
      ev.at("gpu") = static_cast<int64_t>(e.gpu);
      ev.at("hardware_causes") = causes;
      ev.at("explanation") = e.sentence;
      out.slowdown_events.push_back(std::move(ev));
      if (log_) log_->warn("agent: job {}: {}", jw.job_id, e.sentence);
      if (change->kind == StepChange::Kind::Slowdown) {
        ++js.events;
        Record last(kJobSlowdownLast);
        last.at("job_id") = jw.job_id;
        last.at("hardware_cause") = e.findings.empty() ? std::string("none") : e.findings.front().kind;
        last.at("change_time") = (change_ms ? change_ms : now_ms) / 1000;
        last.at("rise") = change->rise();
        last.at("rank") = e.rank;
        last.at("gpu") = static_cast<int64_t>(e.gpu);
        last.at("cause_gpu") = static_cast<int64_t>(e.findings.empty() ? -1 : e.findings.front().gpu);
        js.last = std::move(last);
      }
    }
    if (auto rel = js.detector.relative()) {
      Record st(kJobSlowdownState);
      st.at("job_id") = jw.job_id;
      st.at("slowdown_events") = static_cast<int64_t>(js.events);
      st.at("step_time_ratio") = *rel;
      st.at("slowed") = int64_t{js.detector.slowed() ? 1 : 0};
      out.slowdown_state.push_back(std::move(st));
    }
    if (js.last) out.slowdown_last.push_back(*js.last);
  }
  // A job silent as long as the store's forgetting is forgotten here too.
  for (auto it = slowdowns_.begin(); it != slowdowns_.end();)
    if (!seen.count(it->first) && ++it->second.silent > opts_.limits.forget_after_windows)
      it = slowdowns_.erase(it);
    else
      ++it;
}

}  // namespace gcm::jobsignal
