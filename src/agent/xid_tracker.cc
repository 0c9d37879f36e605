#include "agent/xid_tracker.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/ascii.h"

namespace gcm::agent {

namespace {

constexpr const char* kUnknownUuid = "unknown";
// De-duplication keeps at most this many recent events: a replay of the kernel log since boot can bring thousands.
constexpr size_t kMaxRecent = 1024;

bool all_hex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

const char* to_string(XidSource s) { return s == XidSource::Kmsg ? "kmsg" : "nvml"; }

const char* to_string(XidClearing c) {
  switch (c) {
    case XidClearing::GpuReset:
      return "gpu_reset";
    case XidClearing::Reboot:
      return "reboot";
    case XidClearing::Window:
      return "window";
  }
  return "window";
}

XidClearing clearing_rule(std::string_view action) {
  // NVIDIA's workflows for these end in a GPU reset: a DBE's row remap, NVLink errors.
  if (action == "RESET_GPU" || action.starts_with("WORKFLOW_XID_48") || action.starts_with("WORKFLOW_NVLINK"))
    return XidClearing::GpuReset;
  // Hardware that needs a person or a reboot: nothing within this boot clears it.
  if (action == "RESTART_BM" || action == "RESTART_VM" || action == "CONTACT_SUPPORT" || action == "CHECK_MECHANICALS")
    return XidClearing::Reboot;
  return XidClearing::Window;
}

std::string normalize_pci_bus_id(std::string_view id) {
  std::string s = ascii_lower(id);
  std::string_view v(s);
  if (v.starts_with("pci:")) v.remove_prefix(4);
  size_t c1 = v.find(':');
  size_t c2 = c1 == std::string_view::npos ? c1 : v.find(':', c1 + 1);
  if (c2 == std::string_view::npos) return std::string(v);
  std::string_view domain = v.substr(0, c1), bus = v.substr(c1 + 1, c2 - c1 - 1), dev = v.substr(c2 + 1);
  dev = dev.substr(0, dev.find('.'));
  if (!all_hex(domain) || !all_hex(bus) || !all_hex(dev)) return std::string(v);
  while (domain.size() > 4 && domain[0] == '0') domain.remove_prefix(1);  // NVML's 8-digit domain
  std::string out(domain);
  out.insert(0, 4 - std::min<size_t>(4, out.size()), '0');
  out += ':';
  out += bus;
  out += ':';
  out += dev;
  return out;
}

XidTracker::XidTracker(XidTrackerOptions options) : options_(std::move(options)) {}

const health::XidCatalogue& XidTracker::catalogue() const {
  return options_.catalogue ? *options_.catalogue : health::XidCatalogue::builtin();
}

void XidTracker::set_gpus(const std::vector<GpuIdentity>& gpus) {
  std::lock_guard lock(mu_);
  by_bus_.clear();
  by_index_.clear();
  for (const auto& g : gpus) {
    if (!g.pci_bus_id.empty()) by_bus_[normalize_pci_bus_id(g.pci_bus_id)] = g;
    by_index_[g.index] = g;
  }
}

bool XidTracker::add_kmsg(std::string_view pci_bus_id, int xid, double unix_s, std::string_view detail) {
  std::string bus = normalize_pci_bus_id(pci_bus_id);
  int gpu = -1;
  std::string uuid = kUnknownUuid;
  {
    std::lock_guard lock(mu_);
    auto it = by_bus_.find(bus);
    if (it != by_bus_.end()) {
      gpu = it->second.index;
      if (!it->second.uuid.empty()) uuid = it->second.uuid;
    }
  }
  return add(XidSource::Kmsg, gpu, std::move(uuid), std::move(bus), xid, unix_s, detail);
}

bool XidTracker::add_kmsg(const health::XidLine& x, double unix_s) {
  if (x.kind != health::XidKind::Xid || !x.code) return false;
  return add_kmsg(x.device, *x.code, unix_s, x.detail);
}

bool XidTracker::add_nvml(int gpu, int xid, double unix_s) {
  std::string uuid = kUnknownUuid, bus;
  {
    std::lock_guard lock(mu_);
    auto it = by_index_.find(gpu);
    if (it != by_index_.end()) {
      if (!it->second.uuid.empty()) uuid = it->second.uuid;
      bus = normalize_pci_bus_id(it->second.pci_bus_id);
    }
  }
  return add(XidSource::Nvml, gpu, std::move(uuid), std::move(bus), xid, unix_s, {});
}

bool XidTracker::add(XidSource source, int gpu, std::string uuid, std::string bus, int xid, double unix_s,
                     std::string_view detail) {
  health::XidInfo info = catalogue().lookup(xid);  // outside the lock: a site catalogue is a map lookup, no I/O
  Key key{gpu, std::move(uuid), xid};
  std::lock_guard lock(mu_);
  // The same XID from the other source, close in time and not paired yet, is this one seen twice.
  for (auto& r : recent_) {
    if (r.matched || r.source == source || r.key.gpu != key.gpu || r.key.xid != key.xid) continue;
    if (std::fabs(r.unix_s - unix_s) > options_.dedup_window_s) continue;
    r.matched = true;
    return false;
  }
  recent_.push_back({key, unix_s, source, false});
  // An event two windows older than this one pairs with nothing that arrives in order; the cap bounds a replay of
  // the whole kernel log since boot.
  auto stale = [&](const Recent& r) { return r.unix_s < unix_s - 2 * options_.dedup_window_s; };
  while (!recent_.empty() && (recent_.size() > kMaxRecent || stale(recent_.front()))) recent_.pop_front();

  State& st = states_[key];
  ++st.count;
  st.last_unix = std::max(st.last_unix, unix_s);
  st.action = info.immediate_action.empty() ? "UNKNOWN" : info.immediate_action;
  st.clearing = clearing_rule(info.immediate_action);
  st.critical = info.severity == health::XidSeverity::Critical;

  XidEvent ev;
  ev.seq = next_seq_++;
  ev.gpu = gpu;
  ev.uuid = key.uuid;
  ev.pci_bus_id = bus;
  ev.xid = xid;
  ev.unix_s = unix_s;
  ev.source = source;
  ev.action = st.action;
  ev.critical = st.critical;
  events_.push_back(ev);
  while (events_.size() > options_.max_events) events_.pop_front();

  Record log(kGpuXidEvent);
  log.at("gpu") = int64_t{gpu};
  log.at("uuid") = key.uuid;
  if (!bus.empty()) log.at("pci_bus_id") = bus;
  log.at("xid") = int64_t{xid};
  log.at("time") = unix_s;
  log.at("source") = to_string(source);
  log.at("severity") = to_string(info.severity);
  List causes(info.causes.begin(), info.causes.end());
  log.at("causes") = std::move(causes);
  if (!info.mnemonic.empty()) log.at("mnemonic") = info.mnemonic;
  if (!info.description.empty()) log.at("description") = info.description;
  log.at("immediate_action") = st.action;
  if (!info.investigatory_action.empty()) log.at("investigatory_action") = info.investigatory_action;
  log.at("clears_on") = to_string(st.clearing);
  if (!detail.empty()) log.at("detail") = std::string(detail);
  pending_logs_.push_back(std::move(log));
  if (pending_logs_.size() > options_.max_events) pending_logs_.erase(pending_logs_.begin());  // nobody takes them
  return true;
}

void XidTracker::gpu_reset(int gpu, double unix_s) {
  std::lock_guard lock(mu_);
  double& at = reset_at_[gpu];
  at = std::max(at, unix_s);
}

bool XidTracker::active(const Key& k, const State& s, double now) const {
  if (s.clearing == XidClearing::Reboot) return true;
  auto r = reset_at_.find(k.gpu);
  if (r != reset_at_.end() && s.last_unix <= r->second) return false;
  if (s.clearing == XidClearing::GpuReset) return true;
  return now - s.last_unix < options_.active_window_s;
}

bool XidTracker::is_active(int gpu, int xid, double now) const {
  std::lock_guard lock(mu_);
  for (const auto& [k, s] : states_)
    if (k.gpu == gpu && k.xid == xid && active(k, s, now)) return true;
  return false;
}

std::vector<detector::WindowXid> XidTracker::active_for_gpu(int gpu, double now) const {
  std::lock_guard lock(mu_);
  std::vector<detector::WindowXid> out;
  for (const auto& [k, s] : states_) {
    if (k.gpu != gpu || !active(k, s, now)) continue;
    bool seen = false;  // one entry per code, though a GPU's uuid changed (it came back as another)
    for (const auto& w : out) seen = seen || w.code == k.xid;
    if (!seen) out.push_back({k.xid, s.action, s.critical});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.code < b.code; });
  return out;
}

std::vector<XidEvent> XidTracker::events_since(uint64_t seq) const {
  std::lock_guard lock(mu_);
  std::vector<XidEvent> out;
  for (const auto& e : events_)
    if (e.seq > seq) out.push_back(e);
  return out;
}

std::vector<Record> XidTracker::records(double now) const {
  std::lock_guard lock(mu_);
  std::vector<Record> out;
  out.reserve(states_.size() * 2);
  for (const auto& [k, s] : states_) {
    Record e(kGpuXidErrors);
    e.at("gpu") = int64_t{k.gpu};
    e.at("uuid") = k.uuid;
    e.at("xid") = int64_t{k.xid};
    e.at("errors") = static_cast<int64_t>(s.count);
    e.at("last_timestamp") = s.last_unix;
    out.push_back(std::move(e));
    Record a(kGpuXidActive);
    a.at("gpu") = int64_t{k.gpu};
    a.at("uuid") = k.uuid;
    a.at("xid") = int64_t{k.xid};
    a.at("action") = s.action;
    a.at("active") = int64_t{active(k, s, now) ? 1 : 0};
    a.at("clears_on") = to_string(s.clearing);
    a.at("critical") = s.critical;
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<Record> XidTracker::take_log_records() {
  std::lock_guard lock(mu_);
  std::vector<Record> out;
  out.swap(pending_logs_);
  return out;
}

}  // namespace gcm::agent
