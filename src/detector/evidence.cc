#include "detector/evidence.h"

#include <fmt/format.h>

#include "detector/absolute_rules.h"
#include "detector/clock_signal.h"

namespace gcm::detector {

namespace {

void describe_peers(const GpuWindow& w, const GpuVerdict& v, bool node_effect, const DetectorConfig& c,
                    std::string& out) {
  const auto& sm = v.signals[static_cast<size_t>(Signal::SmClock)];
  if (!sm.evaluated) {
    if (had_hw_throttle(w) && judged_sm_clock(w, c).ratio <= 0)
      out += "sm_clock not compared: a HW throttle reason was set in almost every sample; ";
    return;
  }
  out += fmt::format(
      "sm_clock {:.1f}% of max vs peers' median {:.1f}% ({} peers): deviation {:+.1f}% (raw {:+.1f}%, baseline "
      "{:+.1f}%), z {:+.1f}",
      100 * sm.value, 100 * sm.peer_median, v.peers, 100 * sm.deviation, 100 * sm.raw_deviation, 100 * sm.baseline,
      sm.zscore);
  if (JudgedClock j = judged_sm_clock(w, c); j.unthrottled)
    out += fmt::format(" (the {} samples without a HW throttle reason)", j.samples);
  for (Signal s : {Signal::Power, Signal::GpuUtil}) {
    const auto& d = v.signals[static_cast<size_t>(s)];
    if (d.evaluated) out += fmt::format("; {} {:+.1f}% z {:+.1f}", signal_name(s), 100 * d.deviation, d.zscore);
  }
  if (node_effect) out += "; more than a quarter of the peers deviate too: node or workload effect, not judged";
  out += "; ";
}

}  // namespace

std::string build_evidence(const GpuWindow& w, const GpuVerdict& v, const ThrottleSpan& span, const Persistence& p,
                           bool node_effect, int nvlinks_seen, const DetectorConfig& c) {
  std::string out = fmt::format("{}", to_string(v.state));
  if (!v.reasons.empty()) out += " (" + v.reasons.to_string() + ")";
  out += fmt::format("; {}/{} windows flagged", v.flagged_windows, c.degrade_n);
  if (!v.job_id.empty()) out += "; job " + v.job_id;
  out += "; ";
  if (v.flagged_now.has(Reason::PeerSlow)) out += "peer_slow: ";
  describe_peers(w, v, node_effect, c, out);
  describe_absolute(w, v.flagged_now, span, nvlinks_seen, out);
  if (v.flagged_now.has(Reason::RankSlow) && !w.rank_evidence.empty()) out += w.rank_evidence + "; ";
  // Reasons that still hold without flagging now: how far they are from clearing.
  for (int i = 0; i < kReasonCount; ++i) {
    auto r = static_cast<Reason>(i);
    if (v.reasons.has(r) && !v.flagged_now.has(r)) {
      out += fmt::format("{}: clean for {} windows; ", reason_name(r), p.clean_streak(r));
    }
  }
  if (out.size() >= 2 && out.compare(out.size() - 2, 2, "; ") == 0) out.resize(out.size() - 2);
  return out;
}

}  // namespace gcm::detector
