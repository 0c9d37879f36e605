#include "agent/kernel_events.h"

#include <algorithm>

#include "agent/kernel_event_records.h"

namespace gcm::agent {

namespace {

constexpr const char* kOther = "other";

// The key itself, or its catch-all once the map is full and the key is new.
template <typename Map, typename Key>
Key bounded(const Map& m, Key key, size_t max, const Key& other) {
  if (m.size() < max || m.count(key)) return key;
  return other;
}

}  // namespace

void KernelEventTracker::Count::add(double t) {
  ++n;
  last_unix = std::max(last_unix, t);
}

KernelEventTracker::KernelEventTracker(KernelEventTrackerOptions options) : options_(options) {}

void KernelEventTracker::add(const health::KernelEvent& e, double unix_s) {
  if (!e.info) return;
  std::string kind = health::to_string(e.info->kind);
  std::lock_guard lock(mu_);
  ++total_;
  EventKey ek{kind, e.info->cls, e.device};
  // The catch-all may be the (max_series + 1)-th series: a bound, not an exact count.
  events_[bounded(events_, ek, options_.max_series, EventKey{kind, e.info->cls, kOther})].add(unix_s);
  if (e.info->kind == health::KernelEventKind::SXid) {
    SxidKey sk{e.nvswitch, e.device, e.code.value_or(-1)};
    sxids_[bounded(sxids_, sk, options_.max_series, SxidKey{-1, kOther, -1})].add(unix_s);
  }

  Record log(kNodeKernelEvent);
  log.at("kind") = kind;
  log.at("class") = std::string(e.info->cls);
  if (!e.device.empty()) log.at("device") = e.device;
  if (e.info->kind == health::KernelEventKind::SXid) {
    log.at("nvswitch") = int64_t{e.nvswitch};
    if (e.code) log.at("sxid") = int64_t{*e.code};
  }
  log.at("time") = unix_s;
  log.at("severity") = health::to_string(e.info->severity);
  log.at("cause") = std::string(e.info->cause);
  log.at("action") = std::string(e.info->action);
  log.at("detail") = e.detail;
  pending_logs_.push_back(std::move(log));
  if (pending_logs_.size() > options_.max_logs) pending_logs_.erase(pending_logs_.begin());  // nobody takes them
}

std::vector<Record> KernelEventTracker::records() const {
  std::lock_guard lock(mu_);
  std::vector<Record> out;
  out.reserve(events_.size() + sxids_.size());
  for (const auto& [k, c] : events_) {
    Record r(kNodeKernelEvents);
    r.at("kind") = std::get<0>(k);
    r.at("class") = std::get<1>(k);
    r.at("device") = std::get<2>(k);
    r.at("events") = static_cast<int64_t>(c.n);
    r.at("last_timestamp") = c.last_unix;
    out.push_back(std::move(r));
  }
  for (const auto& [k, c] : sxids_) {
    Record r(kNvswitchSxidErrors);
    r.at("nvswitch") = int64_t{std::get<0>(k)};
    r.at("pci_bus_id") = std::get<1>(k);
    r.at("sxid") = int64_t{std::get<2>(k)};
    r.at("errors") = static_cast<int64_t>(c.n);
    r.at("last_timestamp") = c.last_unix;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Record> KernelEventTracker::take_log_records() {
  std::lock_guard lock(mu_);
  std::vector<Record> out;
  out.swap(pending_logs_);
  return out;
}

uint64_t KernelEventTracker::total() const {
  std::lock_guard lock(mu_);
  return total_;
}

}  // namespace gcm::agent
