#include "agent/hardware_events.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "agent/kernel_event_records.h"
#include "agent/xid_records.h"
#include "health/kernel_event.h"

namespace gcm::agent {

namespace {

XidTrackerOptions xid_options(double clear_after_s) {
  XidTrackerOptions xo;
  xo.active_window_s = clear_after_s;
  return xo;
}

}  // namespace

HardwareEvents::HardwareEvents(double clear_after_s, std::shared_ptr<spdlog::logger> log)
    : log_(std::move(log)), xids_(xid_options(clear_after_s)), node_health_(clear_after_s) {}

HardwareEvents::~HardwareEvents() { stop(); }

void HardwareEvents::start_kmsg(const std::string& path) {
  if (kmsg_) return;
  KmsgFollowerOptions ko;
  ko.path = path;
  ko.log = log_;
  kmsg_ = std::make_unique<KmsgFollower>(
      ko, [this](const KmsgRecord& rec, const std::optional<health::XidLine>& x) { on_kmsg(rec, x); });
  kmsg_->start();
}

void HardwareEvents::on_kmsg(const KmsgRecord& rec, const std::optional<health::XidLine>& x) {
  double t = kmsg_unix_time(rec.ts_usec);
  if (x && x->kind == health::XidKind::Xid) {
    xids_.add_kmsg(*x, t);
    return;
  }
  // The follower read the line's SXid already; any other line may be a link, machine-check or AER event.
  auto e = x ? health::sxid_event(*x, rec.message) : health::classify_host_event(rec.message);
  if (!e) return;
  kernel_events_.add(*e, t);
  node_health_.add_kernel_event(*e, t);
}

void HardwareEvents::start_nvml_events(const nvml::Api& api, std::chrono::milliseconds call_timeout) {
  if (nvml_events_) return;
  NvmlEventWatcherOptions eo;
  eo.log = log_;
  eo.call_timeout = call_timeout;
  nvml_events_ = std::make_unique<NvmlEventWatcher>(
      api, [this](const NvmlXid& e) { xids_.add_nvml(static_cast<int>(e.gpu), static_cast<int>(e.xid), e.unix_s); },
      eo);
  nvml_events_->start();
}

void HardwareEvents::start_amdsmi_events(std::shared_ptr<AmdsmiLibrary> lib, std::chrono::milliseconds call_timeout) {
  if (amdsmi_events_) return;
  AmdsmiEventWatcherOptions eo;
  eo.log = log_;
  eo.call_timeout = call_timeout;
  amdsmi_events_ = std::make_unique<AmdsmiEventWatcher>(
      std::move(lib),
      [this](const AmdsmiEvent& e) { amd_events_.add(static_cast<int>(e.gpu), e.type, e.message, e.unix_s); }, eo);
  amdsmi_events_->start();
}

void HardwareEvents::stop_gpu_events() {
  nvml_events_.reset();
  amdsmi_events_.reset();
}

void HardwareEvents::stop() {
  kmsg_.reset();
  stop_gpu_events();
}

void HardwareEvents::add_window_xids(std::vector<detector::GpuWindow>& summaries) {
  for (const XidEvent& e : xids_.events_since(xid_seq_)) {
    xid_seq_ = std::max(xid_seq_, e.seq);
    log_->warn("agent: [GPU {}] XID {} ({}) from {}", e.gpu, e.xid, e.action,
               e.source == XidSource::Kmsg ? "the kernel log" : "NVML events");
    for (auto& w : summaries)
      if (static_cast<int>(w.gpu) == e.gpu) w.xids.push_back({e.xid, e.action, e.critical, ""});
  }
  auto uuid_of = [&summaries](int gpu) {
    for (const auto& w : summaries)
      if (static_cast<int>(w.gpu) == gpu) return w.uuid;
    return std::string();
  };
  for (AmdWindowEvent& e : amd_events_.take_window_events(uuid_of)) {
    log_->warn("agent: [GPU {}] amdsmi event {} ({}): {}", e.gpu, e.xid.name, e.xid.action, e.message);
    if (e.xid.code == static_cast<int>(amdsmi::kEvtGpuPostReset)) xids_.gpu_reset(e.gpu, e.unix_s);
    for (auto& w : summaries)
      if (static_cast<int>(w.gpu) == e.gpu) w.xids.push_back(e.xid);
  }
}

void HardwareEvents::publish(double now, WindowExport& out, AgentCounters& counters) {
  std::vector<Record> errors, active;
  for (auto& r : xids_.records(now)) (r.schema == &kGpuXidActive.get() ? active : errors).push_back(std::move(r));
  out.publish(kGpuXidErrors, errors);
  out.publish(kGpuXidActive, active);
  for (auto& r : xids_.take_log_records()) out.add_log(std::move(r));
  publish_kernel_events(out);
  if (kmsg_) {
    KmsgFollowerStats ks = kmsg_->stats();
    auto& s = counters.source("kmsg");
    s.up = ks.open;
    s.errors = ks.open_errors + ks.bad_records + ks.overflows;
    s.last_error = ks.last_error;
  }
  // Either event watcher as a source: up while it waits for events, its failed waits, its last problem.
  auto watcher_source = [&counters](const char* name, const auto& es) {
    auto& s = counters.source(name);
    s.up = es.running && es.supported;
    s.errors = es.wait_errors;
    s.last_error = es.problems.empty() ? "" : es.problems.back();
  };
  if (nvml_events_) watcher_source("nvml_events", nvml_events_->stats());
  out.publish(kGpuAmdEvents, amd_events_.records());
  if (amdsmi_events_) watcher_source("amdsmi_events", amdsmi_events_->stats());
}

// Each event is a log line too, as an XID is; a boot's worth of corrected errors replayed at start is not hundreds
// of lines: the first few per window are, then a count.
void HardwareEvents::publish_kernel_events(WindowExport& out) {
  std::vector<Record> events, sxids;
  for (auto& r : kernel_events_.records())
    (r.schema == &kNvswitchSxidErrors.get() ? sxids : events).push_back(std::move(r));
  out.publish(kNodeKernelEvents, events);
  out.publish(kNvswitchSxidErrors, sxids);
  constexpr size_t kLinesPerWindow = 10;
  size_t logged = 0, unlogged = 0;
  for (auto& r : kernel_events_.take_log_records()) {
    auto text = [&r](const char* field) { return r.at(field).is_null() ? std::string() : r.at(field).as_string(); };
    if (text("severity") != "ignore") {
      if (logged < kLinesPerWindow) {
        ++logged;
        log_->warn("agent: kernel log: {} ({}) on '{}': {}", text("kind"), text("class"), text("device"),
                   text("cause"));
      } else {
        ++unlogged;
      }
    }
    out.add_log(std::move(r));
  }
  if (unlogged)
    log_->warn("agent: kernel log: {} more event(s) this window (see gcm_node_kernel_events_total)", unlogged);
}

std::vector<Record> HardwareEvents::publish_node_health(const std::vector<NodeStateEntry>& node,
                                                        const std::string& hostname, double now_s, WindowExport& out) {
  const auto time_s = static_cast<int64_t>(now_s);
  std::vector<Record> events;
  std::map<std::string, Health> now;
  for (const auto& n : node) {
    now[n.reason] = n.health;
    auto it = last_node_health_.find(n.reason);
    if (it == last_node_health_.end() || it->second != n.health) {
      log_->warn("agent: node {} ({}): {}", to_string(n.health), n.reason, n.evidence);
      Health from = it == last_node_health_.end() ? Health::Ok : it->second;
      events.push_back(node_health_event(hostname, time_s, n.reason, from, n.health, n.evidence));
    }
  }
  for (const auto& [reason, h] : last_node_health_)
    if (!now.count(reason)) {
      log_->info("agent: node reason {} cleared", reason);
      events.push_back(node_health_event(hostname, time_s, reason, h, Health::Ok, ""));
    }
  last_node_health_ = std::move(now);
  std::vector<Record> records;
  NodeHealth::append_metrics(node, records);
  out.publish(kNodeHealthState.get(), records);
  for (const auto& e : events) out.add_log(e);
  return events;
}

}  // namespace gcm::agent
