#include "detector/detector.h"

#include <algorithm>
#include <cmath>

#include "detector/absolute_rules.h"
#include "detector/busy.h"
#include "detector/clock_signal.h"
#include "detector/evidence.h"
#include "detector/peer_compare.h"

namespace gcm::detector {

namespace {

// The normalised value of a signal, or 0 when the GPU did not report it. The SM clock is taken relative to the
// GPU's own maximum and power relative to its own limit, so GPUs of different bins or power caps compare.
double signal_value(const GpuWindow& w, Signal s, const DetectorConfig& c) {
  auto ratio = [](const std::optional<FieldStats>& v, const std::optional<FieldStats>& max) {
    if (!v || v->samples == 0) return 0.0;
    if (max && max->samples > 0 && max->mean > 0) return v->mean / max->mean;
    return v->mean;
  };
  switch (s) {
    case Signal::SmClock:
      return judged_sm_clock(w, c).ratio;
    case Signal::Power:
      return ratio(w.power_watts, w.power_limit_watts);
    case Signal::GpuUtil:
      return w.gpu_util_percent && w.gpu_util_percent->samples > 0 ? w.gpu_util_percent->mean : 0;
    case Signal::Count:
      break;
  }
  return 0;
}

ReasonSet all_reasons_but_presence() {
  ReasonSet s;
  for (int i = 0; i < kReasonCount; ++i) s.add(static_cast<Reason>(i));
  s.remove(Reason::Lost);
  s.remove(Reason::NotResponding);
  return s;
}

}  // namespace

Detector::Detector(DetectorConfig config) : config_(std::move(config)) {}

ReasonSet Detector::load_only_reasons() {
  ReasonSet r;
  r.add(Reason::PeerSlow);
  r.add(Reason::PcieDegraded);
  return r;
}

void Detector::forgive_load_only_reasons() {
  for (auto& t : tracks_) t.persistence.forgive(load_only_reasons());
}

std::vector<GpuVerdict> Detector::observe(const std::vector<GpuWindow>& windows) {
  std::vector<GpuVerdict> out;
  observe(windows, out);
  return out;
}

Detector::Track& Detector::track_of(const GpuWindow& w) {
  if (tracks_.size() <= w.gpu) tracks_.resize(w.gpu + 1);
  Track& t = tracks_[w.gpu];
  // Another GPU at this index (replaced, or indices reshuffled after a reset): its history is not this one's.
  if (!w.uuid.empty() && t.uuid != w.uuid) {
    t = Track{};
    t.uuid = w.uuid;
  }
  if (t.job_id != w.job_id) {  // a new job: its peers and its GPUs' usual places differ
    t.job_id = w.job_id;
    t.job_busy_windows = 0;
    t.baseline_windows = 0;
    t.baseline = {};
  }
  return t;
}

void Detector::observe(const std::vector<GpuWindow>& windows, std::vector<GpuVerdict>& out) {
  const size_t n = windows.size();
  out.resize(n);
  // Every GPU's track exists before the first pointer to one is taken: growing tracks_ while round_ holds pointers
  // into it would leave them dangling (a GPU with a higher index seen for the first time).
  unsigned max_gpu = 0;
  for (const auto& w : windows) max_gpu = std::max(max_gpu, w.gpu);
  if (n > 0 && tracks_.size() <= max_gpu) tracks_.resize(max_gpu + 1);
  round_.assign(n, nullptr);
  busy_.assign(n, 0);
  judged_.assign(n, 0);
  node_effect_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const GpuWindow& w = windows[i];
    Track& t = track_of(w);
    round_[i] = &t;
    busy_[i] = is_busy(w, config_) ? 1 : 0;
    if (busy_[i] && !w.job_id.empty()) ++t.job_busy_windows;
    t.throttle.push(w, config_.throttle_span_windows);
    GpuVerdict& v = out[i];
    v.gpu = w.gpu;
    v.uuid = w.uuid;
    v.job_id = w.job_id;
    v.end_unix_ms = w.end_unix_ms;
    v.signals = {};
    v.peers = 0;
    v.flagged_now = {};
    v.event.reset();
    v.evidence.clear();
  }
  compare_peers(windows, out);

  const ReasonSet not_present = all_reasons_but_presence();
  for (size_t i = 0; i < n; ++i) {
    const GpuWindow& w = windows[i];
    Track& t = *round_[i];
    GpuVerdict& v = out[i];
    AbsoluteResult abs = absolute_reasons(w, busy_[i] != 0, t.throttle, t.nvlinks_seen, config_);
    if (w.nvlink_links_active) t.nvlinks_seen = std::max<int>(t.nvlinks_seen, static_cast<int>(*w.nvlink_links_active));
    Persistence::Input in;
    in.flagged = abs.reasons;
    if (v.flagged_now.has(Reason::PeerSlow)) in.flagged.add(Reason::PeerSlow);
    if (w.rank_signal == GpuWindow::RankSignal::Slow) in.flagged.add(Reason::RankSlow);
    if (w.rank_signal == GpuWindow::RankSignal::Held) in.held.add(Reason::RankSlow);
    if (w.presence != Presence::Ok) in.held |= not_present;
    if (!busy_[i]) in.held.add(Reason::PcieDegraded);
    if (!judged_[i]) in.held.add(Reason::PeerSlow);
    for (Reason r : {Reason::Lost, Reason::EccDbe, Reason::RowRemapFailure}) {
      if (in.flagged.has(r)) in.fatal.add(r);
    }
    if (abs.xid_needs_reset) in.fatal.add(Reason::Xid);
    if (abs.aer_fatal) in.fatal.add(Reason::PcieAer);

    HealthState before = t.persistence.state();
    v.state = t.persistence.update(in, config_);
    v.flagged_now = in.flagged;
    v.reasons = t.persistence.active();
    v.flagged_windows = t.persistence.flagged_windows(config_);
    if (v.state != HealthState::Ok || !v.flagged_now.empty() || v.state != before) {
      v.evidence = build_evidence(w, v, t.throttle, t.persistence, node_effect_[i] != 0, t.nvlinks_seen, config_);
    }
    if (v.state != before) {
      HealthEvent e;
      e.from = before;
      e.to = v.state;
      e.reasons = v.reasons;
      e.flagged_windows = v.flagged_windows;
      e.peers = v.peers;
      e.evidence = v.evidence;
      v.event = std::move(e);
    }
  }
  update_baselines(windows, out);
}

void Detector::compare_peers(const std::vector<GpuWindow>& windows, std::vector<GpuVerdict>& out) {
  const size_t n = windows.size();
  std::vector<char>& grouped = grouped_;
  grouped.assign(n, 0);
  std::array<size_t, kMaxPeerGroup> member{}, pos{};
  std::array<double, kMaxPeerGroup> values{}, bases{};
  std::array<SignalDeviation, kMaxPeerGroup> dev{};
  for (size_t i = 0; i < n; ++i) {
    if (grouped[i] || !busy_[i] || windows[i].job_id.empty()) continue;
    size_t m = 0;
    for (size_t j = i; j < n && m < kMaxPeerGroup; ++j) {
      if (!grouped[j] && busy_[j] && windows[j].job_id == windows[i].job_id) {
        grouped[j] = 1;
        member[m++] = j;
      }
    }
    if (m < static_cast<size_t>(config_.min_peers) + 1) continue;
    for (int s = 0; s < kSignalCount; ++s) {
      size_t k = 0;
      for (size_t a = 0; a < m; ++a) {
        double x = signal_value(windows[member[a]], static_cast<Signal>(s), config_);
        if (x <= 0) continue;
        values[k] = x;
        bases[k] = round_[member[a]]->baseline[static_cast<size_t>(s)];
        pos[k++] = member[a];
      }
      if (k < static_cast<size_t>(config_.min_peers) + 1) continue;
      compare_with_peers({values.data(), k}, {bases.data(), k}, config_.mad_floor, {dev.data(), k});
      for (size_t a = 0; a < k; ++a) {
        out[pos[a]].signals[static_cast<size_t>(s)] = dev[a];
        if (s == static_cast<int>(Signal::SmClock)) out[pos[a]].peers = static_cast<int>(k - 1);
      }
    }
    // Judge the SM clock of the GPUs past their warm-up; then the quarter-of-peers rule.
    size_t deviating = 0;
    for (size_t a = 0; a < m; ++a) {
      size_t g = member[a];
      const SignalDeviation& d = out[g].signals[static_cast<size_t>(Signal::SmClock)];
      out[g].flagged_now = {};
      if (!d.evaluated || round_[g]->job_busy_windows <= config_.warmup_windows) continue;
      judged_[g] = 1;
      if (d.deviation <= -config_.slow_deviation && d.zscore <= -config_.slow_zscore) {
        out[g].flagged_now.add(Reason::PeerSlow);
        ++deviating;
      }
    }
    for (size_t a = 0; a < m; ++a) {
      GpuVerdict& v = out[member[a]];
      if (!v.flagged_now.has(Reason::PeerSlow)) continue;
      double others = static_cast<double>(deviating - 1);
      if (others > config_.max_deviating_peer_fraction * v.peers) {
        v.flagged_now.remove(Reason::PeerSlow);
        node_effect_[member[a]] = 1;
      }
    }
  }
}

void Detector::update_baselines(const std::vector<GpuWindow>& windows, std::vector<GpuVerdict>& out) {
  for (size_t i = 0; i < windows.size(); ++i) {
    Track& t = *round_[i];
    const GpuVerdict& v = out[i];
    // Frozen while the GPU looks slow, so a fault is never learned as its usual place.
    if (v.reasons.has(Reason::PeerSlow) || node_effect_[i]) continue;
    const auto& sm = v.signals[static_cast<size_t>(Signal::SmClock)];
    if (!sm.evaluated) continue;
    double alpha = t.baseline_windows < config_.warmup_windows ? 1.0 / (t.baseline_windows + 1)  // the warm-up's mean
                                                               : 1.0 / std::max(1, config_.baseline_windows);
    for (int s = 0; s < kSignalCount; ++s) {
      const auto& d = v.signals[static_cast<size_t>(s)];
      if (!d.evaluated) continue;
      double clamp = s == static_cast<int>(Signal::SmClock) ? config_.baseline_clamp : config_.other_baseline_clamp;
      double& b = t.baseline[static_cast<size_t>(s)];
      b = std::clamp(b + alpha * (d.raw_deviation - b), -clamp, clamp);
    }
    ++t.baseline_windows;
  }
}

}  // namespace gcm::detector
