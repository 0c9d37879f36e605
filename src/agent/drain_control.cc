#include "agent/drain_control.h"
#include "core/clock.h"

#include <algorithm>
#include <ctime>
#include <thread>

#include <fmt/format.h>
#include <spdlog/logger.h>

#include "agent/check_runner.h"
#include "detector/detector.h"

namespace gcm::agent {

namespace {

// rank_slow alone is the job's word that one of its ranks is slow, which a data loader or the host can cause as well
// as the GPU: it is reported, never a drain, unless a hardware reason holds too (docs/reference/job-signals.md).
bool bad(const detector::GpuVerdict& v) {
  if (v.state < detector::HealthState::Degraded) return false;
  detector::ReasonSet others = v.reasons;
  others.remove(detector::Reason::RankSlow);
  return !others.empty();
}

// Reasons an idle GPU can still judge (an XID, ECC, a lost GPU, a throttle): if one holds, the GPU is not clean,
// whatever a confirmation says.
bool idle_judgeable_reason(const detector::GpuVerdict& v) {
  detector::ReasonSet load_only = detector::Detector::load_only_reasons();
  for (int r = 0; r < detector::kReasonCount; ++r) {
    auto reason = static_cast<detector::Reason>(r);
    if (v.reasons.has(reason) && !load_only.has(reason)) return true;
  }
  return false;
}

}  // namespace

std::string drain_evidence(const std::vector<detector::GpuVerdict>& verdicts) {
  std::vector<const detector::GpuVerdict*> worst;
  for (const auto& v : verdicts)
    if (bad(v)) worst.push_back(&v);
  std::stable_sort(worst.begin(), worst.end(), [](auto* a, auto* b) { return a->state > b->state; });
  std::string out;
  for (const auto* v : worst) {
    if (!out.empty()) out += "; ";
    out += fmt::format("GPU {} {}: {}", v->gpu, detector::to_string(v->state),
                       v->evidence.empty() ? v->reasons.to_string() : v->evidence);
  }
  return out;
}

DrainControl::DrainControl(DrainControlOptions opts, std::shared_ptr<spdlog::logger> log)
    : opts_(std::move(opts)), log_(std::move(log)) {}

DrainControl::~DrainControl() {
  if (task_.valid()) task_.wait();
}

std::map<std::string, uint64_t> DrainControl::counts() const {
  std::lock_guard<std::mutex> g(mu_);
  return counts_;
}

suite::ScontrolRunner DrainControl::scontrol() const {
  auto path = suite::locate_scontrol(opts_.scontrol);
  if (!path) throw std::runtime_error("scontrol not found (PATH, /usr/bin, /usr/local/bin, /opt/slurm/bin, /usr/sbin)");
  return suite::make_scontrol_runner(*path, suite::locate_slurm_conf(opts_.slurm_conf), opts_.slurm_timeout_s);
}

void DrainControl::start(std::function<TaskResult()> task) { task_ = std::async(std::launch::async, std::move(task)); }

// Takes the finished task's result, if any; true when it confirmed the node.
bool DrainControl::collect() {
  if (!task_.valid() || task_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
  TaskResult r = task_.get();
  {
    std::lock_guard<std::mutex> g(mu_);
    for (const auto& a : r.actions) ++counts_[a];
  }
  if (r.failed || r.drain_again) last_failure_ = Clock::now();
  if (r.drain_again) episode_handled_ = false;
  if (r.drained) last_poll_.reset();  // ask again as soon as the node is idle: its confirmation can start then
  return r.confirmed;
}

bool DrainControl::on_window(const std::vector<detector::GpuVerdict>& verdicts, bool node_has_job) {
  bool confirmed = collect();
  if (task_.valid()) return confirmed;  // one task at a time
  auto now = Clock::now();
  bool any_bad = std::any_of(verdicts.begin(), verdicts.end(), bad);
  if (!any_bad) episode_handled_ = false;
  bool retry_wait = last_failure_ && now - *last_failure_ < std::chrono::duration<double>(opts_.retry_s);
  if (any_bad && !episode_handled_ && !retry_wait) {
    episode_handled_ = true;
    start([this, evidence = drain_evidence(verdicts)] { return drain_task(evidence); });
    return confirmed;
  }
  // Resume: asked only while no job runs here (a drained node runs its last job to the end first), while no GPU
  // holds a reason an idle GPU can judge, and at most every poll interval (at once after this agent's own drain).
  if (!(opts_.drain || opts_.kubernetes) || node_has_job || retry_wait) return confirmed;
  if (std::any_of(verdicts.begin(), verdicts.end(), idle_judgeable_reason)) return confirmed;
  if (last_poll_ && now - *last_poll_ < std::chrono::duration<double>(opts_.poll_interval_s)) return confirmed;
  last_poll_ = now;
  start([this] { return resume_task(); });
  return confirmed;
}

void DrainControl::kubernetes_mark(TaskResult& r, const std::string& evidence) {
  kube::NodeHealthOptions ko = opts_.kubernetes_node;
  ko.limits = opts_.limits;
  kube::NodeMarkOutcome o;
  try {
    auto api = kube::make_api_client(opts_.kubernetes_api);
    o = kube::mark_node_unhealthy(*api, ko, evidence, /*report_only=*/false, unix_seconds_now());
  } catch (const std::exception& e) {
    o.action = kube::NodeMarkAction::Failed;
    o.message = fmt::format("cannot mark node {}: {}", ko.node, e.what());
  }
  r.actions.push_back(std::string("kubernetes_") + kube::to_string(o.action));
  if (o.action == kube::NodeMarkAction::Failed || o.action == kube::NodeMarkAction::OverBudget) r.drain_again = true;
  if (o.action == kube::NodeMarkAction::Marked) r.drained = true;
  if (o.action == kube::NodeMarkAction::AlreadyMarked)
    log_->info("agent: kubernetes: {}", o.message);
  else
    log_->warn("agent: kubernetes: {}", o.message);
}

DrainControl::TaskResult DrainControl::drain_task(std::string evidence) {
  TaskResult r;
  if (opts_.kubernetes) {
    kubernetes_mark(r, evidence);
    if (!opts_.drain) return r;
  }
  suite::DrainOutcome o;
  try {
    o = suite::drain_for_detector(scontrol(), opts_.node, evidence, opts_.limits, !opts_.drain, unix_time_now());
  } catch (const std::exception& e) {
    o.action = suite::DrainAction::Failed;
    o.message = e.what();
  }
  r.actions.push_back(suite::to_string(o.action));
  r.drained = r.drained || o.action == suite::DrainAction::Drained;
  r.drain_again = r.drain_again || o.action == suite::DrainAction::Failed || o.action == suite::DrainAction::OverBudget;
  if (o.action == suite::DrainAction::Drained || o.action == suite::DrainAction::Failed ||
      o.action == suite::DrainAction::OverBudget)
    log_->warn("agent: drain: {}", o.message);
  else
    log_->info("agent: drain: {}", o.message);
  return r;
}

DrainControl::TaskResult DrainControl::resume_task() {
  TaskResult r;
  try {
    std::optional<suite::ScontrolRunner> sc;
    bool slurm_ours = false, kube_ours = false;
    std::unique_ptr<kube::ApiClient> api;
    if (opts_.drain) {
      sc = scontrol();
      suite::NodeState st = suite::show_node(*sc, opts_.node);
      slurm_ours = st.drain && suite::needs_confirmation(st.reason) && !st.busy;
      if (slurm_ours)
        log_->info("agent: node {} is drained by the detector ('{}') and idle: running the [confirm] checks",
                   opts_.node, st.reason);
    }
    if (opts_.kubernetes) {
      api = kube::make_api_client(opts_.kubernetes_api);
      kube::Node n = kube::get_node(*api, opts_.kubernetes_node.node, {kube::kCordonedByGcmAnnotation});
      kube_ours = kube::node_marked(n);
      if (kube_ours)
        log_->info("agent: Kubernetes node {} is marked {}=False and its GPUs are idle: running the [confirm] checks",
                   opts_.kubernetes_node.node, kube::kGpuHealthyCondition);
    }
    if (!slurm_ours && !kube_ours) return r;  // nothing of ours to resume
    CheckRunner confirm(opts_.suite_path, "", log_, suite::Profile::Confirm);
    if (confirm.size() == 0) {
      log_->warn(
          "agent: node {} stays drained: {} has no [confirm] checks, and the detector's drains are resumed "
          "only after a confirmation (resume it by hand with scontrol when it is fixed)",
          opts_.node, opts_.suite_path);
      r.actions.push_back("confirm_failed");
      return r;
    }
    confirm.start_round();
    std::vector<CheckResult> results;
    while (results.size() < confirm.size()) {
      for (auto& c : confirm.take_results()) results.push_back(std::move(c));
      if (results.size() < confirm.size()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::string failures;
    for (const auto& c : results)
      if (c.code >= 2) failures += fmt::format("{}{}: {}", failures.empty() ? "" : "; ", c.name, c.message);
    if (!failures.empty()) {
      r.actions.push_back("confirm_failed");
      log_->warn("agent: node {} stays drained: the confirmation failed: {}", opts_.node, failures);
      return r;
    }
    r.actions.push_back("confirm_passed");
    r.confirmed = true;
    std::string why;
    if (slurm_ours) {
      if (suite::resume_detector_drain(*sc, opts_.node, why)) {
        r.actions.push_back("resumed");
        log_->warn("agent: {} after {} confirmation check(s) passed", why, results.size());
      } else {
        log_->info("agent: not resuming: {}", why);
      }
    }
    if (kube_ours) {
      kube::NodeMarkOutcome o = kube::clear_node_mark(*api, opts_.kubernetes_node, unix_seconds_now());
      r.actions.push_back(std::string("kubernetes_") + kube::to_string(o.action));
      if (o.action == kube::NodeMarkAction::Failed) r.failed = true;
      log_->warn("agent: kubernetes: {} after {} confirmation check(s) passed", o.message, results.size());
    }
  } catch (const std::exception& e) {
    r.actions.push_back("failed");
    r.failed = true;
    log_->warn("agent: cannot check or resume node {}: {}", opts_.node, e.what());
  }
  return r;
}

}  // namespace gcm::agent
