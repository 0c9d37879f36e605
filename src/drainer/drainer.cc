#include "drainer/drainer.h"
#include "core/clock.h"

#include <ctime>

#include <fmt/format.h>
#include <spdlog/logger.h>

namespace gcm::drainer {

Drainer::Drainer(DrainerOptions opts, std::shared_ptr<spdlog::logger> log)
    : opts_(std::move(opts)), log_(std::move(log)) {
  listener_ = std::make_unique<HttpListener>(opts_.listen, [this](const HttpRequest& r) { return handle(r); });
}

Drainer::~Drainer() { stop(); }

void Drainer::start() {
  worker_ = std::thread([this] { work(); });
  listener_->start();
}

void Drainer::stop() {
  if (listener_) listener_->stop();
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void Drainer::wait_idle() {
  std::unique_lock<std::mutex> g(mu_);
  idle_cv_.wait(g, [this] { return (queue_.empty() && !busy_) || stopping_; });
}

HttpReply Drainer::handle(const HttpRequest& req) {
  HttpReply rep;
  if (req.path == "/alertmanager") {
    if (req.method != "POST") {
      rep.status = 405;
      rep.extra_headers = "Allow: POST\r\n";
      rep.body = "POST Alertmanager's webhook payload here\n";
      return rep;
    }
    return webhook(req);
  }
  if (req.path == "/metrics") {
    rep.content_type = "text/plain; version=0.0.4; charset=utf-8";
    rep.body = metrics_text();
  } else if (req.path == "/health" || req.path == "/-/healthy") {
    rep.body = "OK\n";
  } else {
    rep.status = 404;
    rep.body = "not found: POST /alertmanager, GET /metrics, GET /health\n";
  }
  return rep;
}

HttpReply Drainer::webhook(const HttpRequest& req) {
  HttpReply rep;
  if (req.too_large) {
    rep.status = 413;
    rep.body = "payload too large\n";
    return rep;
  }
  std::vector<AlertNotice> alerts;
  try {
    alerts = parse_alertmanager_webhook(req.body);
  } catch (const WebhookError& e) {
    std::lock_guard<std::mutex> g(mu_);
    ++bad_requests_;
    rep.status = 400;
    rep.body = fmt::format("bad webhook payload: {}\n", e.what());
    return rep;
  }
  std::vector<Job> jobs;
  std::map<std::string, uint64_t> seen;
  for (const auto& a : alerts) {
    auto action = a.labels.find(opts_.action_label);
    auto node = a.labels.find(opts_.node_label);
    if (a.status != "firing" || action == a.labels.end() || action->second != "drain") {
      // Resolved alerts resume nothing: only the agent's confirmation on the idle node resumes a detector drain.
      ++seen[a.status == "firing" ? "ignored" : a.status];
      continue;
    }
    if (node == a.labels.end() || node->second.empty()) {
      ++seen["no_node"];
      log_->warn("drainer: alert {} has gcm_action=drain but no '{}' label: nothing to drain",
                 a.labels.count("alertname") ? a.labels.at("alertname") : "?", opts_.node_label);
      continue;
    }
    ++seen["firing"];
    Job j;
    j.node = node->second;
    j.alertname = a.labels.count("alertname") ? a.labels.at("alertname") : "";
    auto ev = a.annotations.find(opts_.evidence_annotation);
    if (ev == a.annotations.end()) ev = a.annotations.find("summary");
    j.evidence = ev != a.annotations.end() ? ev->second : j.alertname;
    jobs.push_back(std::move(j));
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    for (const auto& [k, n] : seen) notices_[k] += n;
    if (queue_.size() + jobs.size() > opts_.max_queue) {
      ++queue_full_;
      rep.status = 503;
      rep.extra_headers = "Retry-After: 10\r\n";
      rep.body = "drain queue full\n";
      return rep;
    }
    for (auto& j : jobs) queue_.push_back(std::move(j));
  }
  cv_.notify_one();
  rep.body = fmt::format("{} drain request(s) queued\n", jobs.size());
  return rep;
}

void Drainer::work() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> g(mu_);
      busy_ = false;
      idle_cv_.notify_all();
      cv_.wait(g, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    suite::DrainOutcome o;
    try {
      o = suite::drain_for_detector(opts_.scontrol, job.node, job.evidence, opts_.limits, !opts_.drain,
                                    unix_time_now());
    } catch (const std::exception& e) {
      o.action = suite::DrainAction::Failed;
      o.message = e.what();
    }
    bool loud = o.action == suite::DrainAction::Drained || o.action == suite::DrainAction::WouldDrain ||
                o.action == suite::DrainAction::OverBudget || o.action == suite::DrainAction::Failed;
    if (loud)
      log_->warn("drainer: {}: {}", job.alertname, o.message);
    else
      log_->info("drainer: {}: {}", job.alertname, o.message);
    std::lock_guard<std::mutex> g(mu_);
    ++actions_[suite::to_string(o.action)];
  }
}

std::string Drainer::metrics_text() const {
  std::lock_guard<std::mutex> g(mu_);
  std::string out;
  out +=
      "# HELP gcm_drainer_alerts_total Alerts received from Alertmanager, by what was made of them.\n"
      "# TYPE gcm_drainer_alerts_total counter\n";
  for (const char* k : {"firing", "resolved", "ignored", "no_node"}) {
    auto it = notices_.find(k);
    out += fmt::format("gcm_drainer_alerts_total{{status=\"{}\"}} {}\n", k, it == notices_.end() ? 0 : it->second);
  }
  out += "# HELP gcm_drainer_actions_total Drain decisions, by outcome.\n# TYPE gcm_drainer_actions_total counter\n";
  for (auto a : {suite::DrainAction::Drained, suite::DrainAction::WouldDrain, suite::DrainAction::AlreadyDrained,
                 suite::DrainAction::OtherReason, suite::DrainAction::OverBudget, suite::DrainAction::Failed}) {
    auto it = actions_.find(suite::to_string(a));
    out += fmt::format("gcm_drainer_actions_total{{action=\"{}\"}} {}\n", suite::to_string(a),
                       it == actions_.end() ? 0 : it->second);
  }
  out += fmt::format(
      "# HELP gcm_drainer_queue_length Drains waiting to be sent.\n# TYPE gcm_drainer_queue_length "
      "gauge\ngcm_drainer_queue_length {}\n",
      queue_.size());
  out += fmt::format(
      "# HELP gcm_drainer_bad_requests_total Webhook payloads refused (400).\n# TYPE "
      "gcm_drainer_bad_requests_total counter\ngcm_drainer_bad_requests_total {}\n",
      bad_requests_);
  out += fmt::format(
      "# HELP gcm_drainer_queue_full_total Webhooks answered 503: the queue was full.\n# TYPE "
      "gcm_drainer_queue_full_total counter\ngcm_drainer_queue_full_total {}\n",
      queue_full_);
  out += fmt::format(
      "# HELP gcm_drainer_drain_enabled 1 with --drain, 0 when it reports only.\n# TYPE "
      "gcm_drainer_drain_enabled gauge\ngcm_drainer_drain_enabled {}\n",
      opts_.drain ? 1 : 0);
  return out;
}

}  // namespace gcm::drainer
