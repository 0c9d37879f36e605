#include "jobsignal/job_signals.h"

#include <pwd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "detector/peer_compare.h"
#include "jobsignal/points.h"
#include "jobsignal/records.h"
#include "metrics_service.pb.h"
#include "otlp/signal.h"
#include "processor/otlp_request.h"

namespace gcm::jobsignal {
namespace {

bool loopback(const std::string& host) {
  return host.rfind("127.", 0) == 0 || host == "localhost" || host == "::1";
}

std::optional<int64_t> uid_of_user(const std::string& name) {
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(4096);
  if (::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found) return std::nullopt;
  return static_cast<int64_t>(found->pw_uid);
}

}  // namespace

const char* refusal_name(Refusal r) {
  switch (r) {
    case Refusal::UnknownSender: return "unknown_sender";
    case Refusal::WrongOwner: return "wrong_owner";
    case Refusal::TooLarge: return "too_large";
    case Refusal::BadRequest: return "bad_request";
    case Refusal::JobLimit: return "job_limit";
    case Refusal::RankLimit: return "rank_limit";
    case Refusal::NotFound: return "not_found";
    case Refusal::Count: break;
  }
  return "?";
}

JobSignals::JobSignals(JobSignalOptions opts, std::shared_ptr<spdlog::logger> log)
    : opts_(std::move(opts)),
      log_(log ? std::move(log) : spdlog::default_logger()),
      store_(opts_.limits, [this](const std::string& job) { return owner_of(job); }),
      judge_(opts_.detector) {}

JobSignals::~JobSignals() { stop(); }

std::optional<int64_t> JobSignals::owner_of(const std::string& job_id) {
  std::string user;
  {
    std::lock_guard<std::mutex> g(node_mu_);
    auto it = job_users_.find(job_id);
    if (it == job_users_.end() || it->second.empty()) return std::nullopt;
    user = it->second;
  }
  return uid_of_user(user);
}

void JobSignals::start() {
  auto handler = [this](const HttpRequest& req) { return handle(req); };
  HttpListenerOptions lo;
  lo.max_body = opts_.max_body;
  lo.max_in_flight = 4 * opts_.max_body;
  lo.max_connections = opts_.max_connections;
  lo.workers = 1;  // decoding a request is the work: off the I/O thread
  lo.inline_get = true;
  if (!opts_.listen.empty()) {
    auto [host, port] = parse_listen_address(opts_.listen, "--job-signal-listen");
    if (!loopback(host))
      throw std::invalid_argument(fmt::format(
          "--job-signal-listen '{}': only a loopback address (127.0.0.1:PORT or [::1]:PORT) is accepted: the senders "
          "are this node's processes, identified through its socket table",
          opts_.listen));
    HttpListenerOptions t = lo;
    t.host = host == "localhost" ? "127.0.0.1" : host;
    t.port = port;
    tcp_listener_ = std::make_unique<HttpListener>(t, handler);
    tcp_url_host_ = t.host.find(':') == std::string::npos ? t.host : "[" + t.host + "]";
  }
  if (!opts_.socket_path.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(opts_.socket_path).parent_path(), ec);
    HttpListenerOptions u = lo;
    u.unix_path = opts_.socket_path;
    unix_listener_ = std::make_unique<HttpListener>(u, handler);
  }
  if (unix_listener_) unix_listener_->start();
  if (tcp_listener_) tcp_listener_->start();
  log_->info("agent: job signals on {}{}{}", opts_.socket_path.empty() ? "" : opts_.socket_path,
             opts_.socket_path.empty() || !tcp_listener_ ? "" : " and ",
             tcp_listener_ ? fmt::format("http://{}:{}/v1/metrics", tcp_url_host_, tcp_listener_->port()) : "");
}

void JobSignals::stop() {
  if (unix_listener_) unix_listener_->stop();
  if (tcp_listener_) tcp_listener_->stop();
  unix_listener_.reset();
  tcp_listener_.reset();
}

int JobSignals::tcp_port() const { return tcp_listener_ ? tcp_listener_->port() : 0; }

void JobSignals::set_node(const std::map<unsigned, std::string>& gpu_uuids,
                          const std::map<std::string, std::string>& job_users) {
  std::lock_guard<std::mutex> g(node_mu_);
  GpuUuids next;
  for (const auto& [index, uuid] : gpu_uuids)
    if (!uuid.empty()) next[uuid] = index;
  if (next != uuids_) senders_ = SenderCache{};  // a GPU named by UUID may have moved
  uuids_ = std::move(next);
  job_users_ = job_users;
}

HttpReply JobSignals::refuse(Refusal why, int status, bool json, const std::string& message) {
  refused_[static_cast<size_t>(why)].fetch_add(1, std::memory_order_relaxed);
  // The first refusals say why in the log; after that the counter does (a misconfigured job would fill the log).
  if (logged_refusals_.fetch_add(1, std::memory_order_relaxed) < 20)
    log_->warn("agent: job signals: refused ({}): {}", refusal_name(why), message);
  HttpReply r;
  r.status = status;
  r.content_type = json ? "application/json" : "application/x-protobuf";
  r.body = processor::error_body(json, status, message);
  return r;
}

HttpReply JobSignals::handle(const HttpRequest& req) {
  requests_.fetch_add(1, std::memory_order_relaxed);
  bool json_hint = req.header("content-type").find("json") != std::string::npos;
  if (req.path != "/v1/metrics" || req.method != "POST")
    return refuse(Refusal::NotFound, req.path == "/v1/metrics" ? 405 : 404, true,
                  fmt::format("{} {}: the job-signal endpoint takes POST /v1/metrics (OTLP metrics)", req.method,
                              req.path));
  if (req.too_large)
    return refuse(Refusal::TooLarge, 413, json_hint,
                  fmt::format("the body exceeds the limit of {} bytes; send fewer steps per request", opts_.max_body));

  // Who sent it: the kernel's word, never the request's.
  ProcessCredentials cred;
  if (req.peer.unix_socket) {
    cred = {req.peer.pid, req.peer.uid};
  } else if (auto owner = tcp_peer_process(opts_.procfs, req.peer.address, req.peer.port, req.peer.local_address,
                                           req.peer.local_port)) {
    cred = *owner;
  } else {
    return refuse(Refusal::UnknownSender, 403, json_hint,
                  fmt::format("no process of this node holds the connection from {}:{} (job signals are taken "
                              "from this node's processes only)",
                              req.peer.address, req.peer.port));
  }
  std::string why;
  std::optional<Sender> sender;
  {
    std::lock_guard<std::mutex> g(node_mu_);
    double now_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    sender = senders_.identify(opts_.procfs, cred, uuids_, &why, now_s);
  }
  if (!sender) return refuse(Refusal::UnknownSender, 403, json_hint, "unknown sender: " + why);

  opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest decoded;
  processor::RequestResult d = processor::decode_metrics_request(
      req.header("content-type"), req.header("content-encoding"), req.body, opts_.max_body, decoded);
  if (d.status != 200)
    return refuse(d.status == 413 ? Refusal::TooLarge : Refusal::BadRequest, d.status, d.json, d.message);

  ExtractedPoints points = extract_points(decoded);
  for (const auto& claim : points.claimed_jobs)
    if (claim != sender->job_id) {
      claims_ignored_.fetch_add(1, std::memory_order_relaxed);
      break;
    }
  AddResult added = store_.add(*sender, points);
  switch (added.status) {
    case AddStatus::Ok: break;
    case AddStatus::WrongOwner: return refuse(Refusal::WrongOwner, 403, d.json, added.message);
    case AddStatus::JobLimit: return refuse(Refusal::JobLimit, 429, d.json, added.message);
    case AddStatus::RankLimit: return refuse(Refusal::RankLimit, 429, d.json, added.message);
  }
  points_.fetch_add(added.accepted, std::memory_order_relaxed);
  ignored_.fetch_add(points.ignored, std::memory_order_relaxed);
  bad_values_.fetch_add(points.bad_values, std::memory_order_relaxed);
  full_.fetch_add(added.dropped_full, std::memory_order_relaxed);
  int64_t rejected = static_cast<int64_t>(points.bad_values + added.dropped_full);
  std::string message;
  if (points.bad_values)
    message = fmt::format("{} point(s) with a negative, non-finite or over-a-day value dropped", points.bad_values);
  if (added.dropped_full)
    message += fmt::format("{}{} step(s) over the {} kept per rank and window dropped", message.empty() ? "" : "; ",
                           added.dropped_full, opts_.limits.max_steps);
  HttpReply r;
  r.content_type = d.json ? "application/json" : "application/x-protobuf";
  r.body = processor::success_body(otlp::Signal::Metrics, d.json, rejected, message);
  return r;
}

WindowOutput JobSignals::close_window(std::vector<detector::GpuWindow>& gpus, double window_seconds) {
  WindowOutput out;
  std::vector<JobWindow> jobs = store_.close_window();
  out.judgements = judge_.judge(jobs);

  for (auto& w : gpus) {
    w.rank_signal = detector::GpuWindow::RankSignal::Clean;
    w.rank_evidence.clear();
  }
  for (const RankJudgement& j : out.judgements) {
    for (auto& w : gpus) {
      if (j.gpu < 0 || static_cast<int>(w.gpu) != j.gpu) continue;
      if (j.judgement == Judgement::Slow) {
        w.rank_signal = detector::GpuWindow::RankSignal::Slow;
        if (!w.rank_evidence.empty()) w.rank_evidence += "; ";
        w.rank_evidence += j.evidence;
      } else if (j.judgement == Judgement::Held && w.rank_signal == detector::GpuWindow::RankSignal::Clean) {
        w.rank_signal = detector::GpuWindow::RankSignal::Held;
      }
    }
  }

  std::map<std::string, bool> seen;
  for (const JobWindow& jw : jobs) {
    seen[jw.job_id] = true;
    std::vector<double> steps, computes, collectives;
    const RankWindow* slowest = nullptr;
    double slowest_value = -1, tokens = 0;
    uint64_t step_count = 0;
    for (const RankWindow& r : jw.ranks) {
      if (r.step_duration) steps.push_back(*r.step_duration);
      if (r.collective_time) collectives.push_back(*r.collective_time);
      std::optional<double> v = r.compute_duration ? r.compute_duration : r.step_duration;
      if (v) computes.push_back(*v);
      if (v && *v > slowest_value) {
        slowest_value = *v;
        slowest = &r;
      }
      tokens += r.tokens;
      step_count += r.steps;
    }
    uint64_t& total = steps_total_[jw.job_id];
    total += step_count;
    Record rec(kJobStepSummary);
    rec.at("job_id") = jw.job_id;
    rec.at("ranks") = static_cast<int64_t>(jw.ranks.size());
    rec.at("steps") = static_cast<int64_t>(total);
    if (!steps.empty()) rec.at("step_duration") = detector::median_in_place(steps.data(), steps.size());
    // The node's median beside its slowest rank: one slow GPU moves only the slowest, a slow node (its network,
    // host or power) moves both, which is what the cross-node rules tell apart.
    if (!computes.empty()) rec.at("compute_duration") = detector::median_in_place(computes.data(), computes.size());
    if (slowest) {
      rec.at("slowest_compute_duration") = slowest_value;
      rec.at("slowest_rank") = slowest->rank;
      rec.at("slowest_gpu") = static_cast<int64_t>(slowest->gpu);
    }
    if (!collectives.empty())
      rec.at("collective_duration") = detector::median_in_place(collectives.data(), collectives.size());
    if (window_seconds > 0) rec.at("tokens_per_second") = tokens / window_seconds;
    out.summaries.push_back(std::move(rec));
  }
  // A job that reported nothing this window has no summary; its running step count goes once the store forgot it.
  if (steps_total_.size() > opts_.limits.max_jobs * 2)
    for (auto it = steps_total_.begin(); it != steps_total_.end();)
      it = seen.count(it->first) ? std::next(it) : steps_total_.erase(it);

  take_slowdowns(jobs, gpus, out);

  Record recv(kJobSignalReceiver);
  recv.at("requests") = static_cast<int64_t>(requests_.load());
  recv.at("points") = static_cast<int64_t>(points_.load());
  recv.at("points_ignored") = static_cast<int64_t>(ignored_.load());
  recv.at("claims_ignored") = static_cast<int64_t>(claims_ignored_.load());
  recv.at("jobs") = static_cast<int64_t>(store_.jobs());
  out.receiver.push_back(std::move(recv));
  for (size_t i = 0; i < refused_.size(); ++i) {
    Record r(kJobSignalRefused);
    r.at("why") = refusal_name(static_cast<Refusal>(i));
    r.at("requests_refused") = static_cast<int64_t>(refused_[i].load());
    out.refused.push_back(std::move(r));
  }
  for (auto [why, n] : {std::pair<const char*, uint64_t>{"bad_value", bad_values_.load()},
                        std::pair<const char*, uint64_t>{"rank_window_full", full_.load()}}) {
    Record r(kJobSignalDropped);
    r.at("why") = why;
    r.at("points_dropped") = static_cast<int64_t>(n);
    out.dropped.push_back(std::move(r));
  }
  return out;
}

}  // namespace gcm::jobsignal
