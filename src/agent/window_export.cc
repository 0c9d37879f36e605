#include "agent/window_export.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/agent.h"
#include "agent/agent_schemas.h"
#include "core/retry.h"
#include "otlp/delivery.h"
#include "otlp/encode.h"
#include "sinks/otel_config.h"

namespace gcm::agent {

namespace {

// --otlp-header 'Name: value' as the otel sink's headers.
Object otlp_header_object(const std::vector<std::string>& headers) {
  Object out;
  for (const auto& h : headers) {
    auto colon = h.find(':');
    if (colon == std::string::npos) throw AgentUsageError(fmt::format("--otlp-header '{}': expected 'Name: value'", h));
    std::string value = h.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    out.push_back({h.substr(0, colon), value});
  }
  return out;
}

}  // namespace

WindowExport::WindowExport(AgentCounters& counters, std::shared_ptr<spdlog::logger> log)
    : counters_(counters), log_(std::move(log)) {}

WindowExport::~WindowExport() = default;

void WindowExport::start_otlp(const AgentOptions& opts) {
  if (opts.otlp_endpoint.empty()) return;
  Object o{{"otel_endpoint", opts.otlp_endpoint},
           {"protocol", opts.otlp_protocol},
           {"otel_timeout", opts.otlp_timeout_s},
           {"compression", opts.otlp_gzip ? "gzip" : "none"}};
  Object headers = otlp_header_object(opts.otlp_headers);
  if (!headers.empty()) o.push_back({"headers", Value(std::move(headers))});
  otlp::DeliveryOptions d;
  try {
    d.transport =
        std::make_shared<otlp::TransportConfig>(otel_transport_config(SinkOptions("otel", Value(std::move(o)))));
  } catch (const SinkUsageError& e) {
    throw AgentUsageError(fmt::format("--otlp-*: {}", e.what()));
  }
  d.name = "agent";
  // Every window is on disk before it is sent, and the windows a receiver refuses for its own reasons (a wrong
  // token, a receiver in trouble) wait there too.
  d.spool_policy = otlp::SpoolPolicy::Always;
  d.spool_dir = opts.spool_dir;
  d.keep_refused = true;
  d.backoff = RetryPolicy{0, 1, 2, 30};
  try {
    spool_limit_bytes_ = parse_byte_size(opts.spool_max_bytes);
    d.spool_bytes = spool_limit_bytes_;
    otlp_ = std::make_unique<otlp::Delivery>(std::move(d), log_);
  } catch (const otlp::TransportError& e) {
    throw AgentUsageError(fmt::format("--otlp-*: {}", e.what()));
  } catch (const std::exception& e) {
    throw AgentUsageError(fmt::format("--spool-dir: {}", e.what()));
  }
  otlp_->start();
  otlp_resource_ = otel_resource(Object{});
  log_->info("agent: pushing OTLP ({}) to {} through the spool in {}", opts.otlp_protocol, opts.otlp_endpoint,
             opts.spool_dir);
}

void WindowExport::publish(const Schema& schema, const std::vector<Record>& records) {
  store_.begin_round(schema);
  for (const auto& r : records) store_.add(r);
  store_.end_round(schema);
  if (otlp_) window_metrics_.insert(window_metrics_.end(), records.begin(), records.end());
}

void WindowExport::add_log(Record record) {
  if (otlp_) window_logs_.push_back(std::move(record));
}

void WindowExport::forget_window_records() { window_metrics_.clear(); }

void WindowExport::render_page() {
  std::string text = store_.render();
  std::lock_guard<std::mutex> g(page_mu_);
  page_ = std::move(text);
}

std::string WindowExport::page() const {
  std::lock_guard<std::mutex> g(page_mu_);
  return page_;
}

size_t WindowExport::page_size() const {
  std::lock_guard<std::mutex> g(page_mu_);
  return page_.size();
}

void WindowExport::write_textfile(const std::string& path) {
  if (path.empty()) return;
  std::string text = page();
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  std::ofstream out(tmp, std::ios::trunc);
  out << text;
  out.close();
  if (!out || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    if (counters_.source("textfile").failed(fmt::format("cannot write the textfile {}", path)))
      log_->error("agent: cannot write the textfile {}", path);
  }
}

void WindowExport::publish_export_stats() {
  if (!otlp_) return;
  otlp::DeliveryStats st = otlp_->stats();
  Record r(kAgentExport);
  r.at("sent_points") = static_cast<int64_t>(st.delivered);
  r.at("dropped_points") = static_cast<int64_t>(st.lost());
  r.at("export_failures") = static_cast<int64_t>(st.retried);
  r.at("spool_entries") = static_cast<int64_t>(st.spool.entries);
  r.at("spool") = static_cast<int64_t>(st.spool.bytes);
  r.at("spool_limit") = static_cast<int64_t>(spool_limit_bytes_);
  r.at("spool_oldest_age") = st.oldest_age_seconds;
  publish(kAgentExport, {r});
  auto& s = counters_.source("otlp");
  s.up = st.spool.entries == 0 || st.last_error.empty();
  s.errors = st.retried;
  s.last_error = st.last_error;
}

// A kill -9 after take() returns loses nothing of this window: the request is on disk.
void WindowExport::push_otlp(int64_t end_ms) {
  if (!otlp_) return;
  int64_t ts = end_ms / 1000;
  otlp::MetricsBuilder mb(otlp_resource_);
  for (const auto& r : window_metrics_) mb.add(r, ts);
  otlp::LogsBuilder lb(otlp_resource_);
  uint64_t observed = static_cast<uint64_t>(end_ms) * 1000000ULL;
  for (const auto& r : window_logs_) lb.add(r, ts, observed);
  if (mb.points() > 0) {
    std::string request = mb.request().SerializeAsString();
    otlp_->take(otlp::Signal::Metrics, request, mb.points());
  }
  if (lb.records() > 0) {
    std::string request = lb.request().SerializeAsString();
    otlp_->take(otlp::Signal::Logs, request, lb.records());
  }
  window_metrics_.clear();
  window_logs_.clear();
}

void WindowExport::stop_otlp() {
  if (!otlp_) return;
  bool all = otlp_->flush(std::chrono::seconds(5));
  otlp::DeliveryStats st = otlp_->stats();
  log_->info("agent: OTLP flushed{}; {} window request(s) left in the spool", all ? "" : " in part", st.spool.entries);
  otlp_.reset();
}

}  // namespace gcm::agent
