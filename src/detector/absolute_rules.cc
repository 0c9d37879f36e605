#include "detector/absolute_rules.h"

#include <algorithm>

#include <fmt/format.h>

namespace gcm::detector {

namespace {

bool above(const std::optional<int64_t>& v, double bound) { return v && static_cast<double>(*v) > bound; }

bool pcie_below_max(const GpuWindow& w) {
  bool gen = w.pcie_gen && w.pcie_gen_max && *w.pcie_gen < *w.pcie_gen_max;
  bool width = w.pcie_width && w.pcie_width_max && *w.pcie_width < *w.pcie_width_max;
  return gen || width;
}

bool xid_counts(const WindowXid& x) {
  if (x.action == "IGNORE") return false;
  return !x.action.empty() || x.critical;  // a critical code without a catalogue action still counts
}

bool xid_is_fatal(const WindowXid& x, const DetectorConfig& c) {
  return std::find(c.xid_failed_actions.begin(), c.xid_failed_actions.end(), x.action) != c.xid_failed_actions.end();
}

std::string opt_text(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "?"; }

}  // namespace

AbsoluteResult absolute_reasons(const GpuWindow& w, bool busy, const ThrottleSpan& span, int nvlinks_seen,
                                const DetectorConfig& c) {
  AbsoluteResult r;
  if (w.presence == Presence::Lost) r.reasons.add(Reason::Lost);
  if (w.presence == Presence::NotResponding) r.reasons.add(Reason::NotResponding);
  if (span.fraction(Throttle::HwSlowdown) > c.throttle_fraction) r.reasons.add(Reason::HwSlowdown);
  if (span.fraction(Throttle::HwThermal) > c.throttle_fraction) r.reasons.add(Reason::HwThermal);
  if (span.fraction(Throttle::PowerBrake) > c.throttle_fraction) r.reasons.add(Reason::PowerBrake);
  if (busy && pcie_below_max(w)) r.reasons.add(Reason::PcieDegraded);
  double minutes = (w.seconds > 0 ? w.seconds : 30.0) / 60.0;
  if (above(w.pcie_replays, c.pcie_replays_per_minute * minutes)) r.reasons.add(Reason::PcieReplays);
  if (above(w.nvlink_crc_errors, c.nvlink_crc_per_second * minutes * 60.0) ||
      above(w.nvlink_replay_errors, static_cast<double>(c.nvlink_replay_per_window)) ||
      above(w.nvlink_recovery_errors, static_cast<double>(c.nvlink_recovery_per_window))) {
    r.reasons.add(Reason::NvlinkErrors);
  }
  if (above(w.ecc_uncorrected_volatile, 0)) r.reasons.add(Reason::EccDbe);
  if (above(w.remapped_rows_pending, 0)) r.reasons.add(Reason::RowRemapPending);
  if (above(w.remapped_rows_failure, 0)) r.reasons.add(Reason::RowRemapFailure);
  for (const auto& x : w.xids) {
    if (!xid_counts(x)) continue;
    r.reasons.add(Reason::Xid);
    if (xid_is_fatal(x, c)) r.xid_needs_reset = true;
  }
  // A link that is down counts no CRC, replay or recovery: only the number of active links says it.
  if (w.nvlink_links_active && nvlinks_seen > 0 && *w.nvlink_links_active < nvlinks_seen)
    r.reasons.add(Reason::NvlinkDown);
  if (w.pcie_aer_fatal > 0 || w.pcie_aer_non_fatal > 0) r.reasons.add(Reason::PcieAer);
  r.aer_fatal = w.pcie_aer_fatal > 0;
  return r;
}

void describe_absolute(const GpuWindow& w, ReasonSet f, const ThrottleSpan& span, int nvlinks_seen,
                       std::string& out) {
  auto frac = [&](Reason r, Throttle t, const char* what) {
    if (f.has(r))
      out += fmt::format("{}: {} {:.0f}% of the last windows; ", reason_name(r), what, 100.0 * span.fraction(t));
  };
  if (f.has(Reason::Lost)) out += "lost: the GPU is lost; ";
  if (f.has(Reason::NotResponding)) out += "not_responding: an NVML call timed out; ";
  frac(Reason::HwSlowdown, Throttle::HwSlowdown, "HW_SLOWDOWN");
  frac(Reason::HwThermal, Throttle::HwThermal, "HW_THERMAL_SLOWDOWN");
  frac(Reason::PowerBrake, Throttle::PowerBrake, "HW_POWER_BRAKE_SLOWDOWN");
  if (f.has(Reason::PcieDegraded)) {
    out += fmt::format("pcie_degraded: gen {}/{} width x{}/x{} while busy; ", opt_text(w.pcie_gen),
                       opt_text(w.pcie_gen_max), opt_text(w.pcie_width), opt_text(w.pcie_width_max));
  }
  if (f.has(Reason::PcieReplays))
    out += fmt::format("pcie_replays: {} in {:.0f} s; ", opt_text(w.pcie_replays), w.seconds);
  if (f.has(Reason::NvlinkErrors)) {
    out += fmt::format("nvlink_errors: crc {} replay {} recovery {} in {:.0f} s; ", opt_text(w.nvlink_crc_errors),
                       opt_text(w.nvlink_replay_errors), opt_text(w.nvlink_recovery_errors), w.seconds);
  }
  if (f.has(Reason::EccDbe)) out += fmt::format("ecc_dbe: {} uncorrected; ", opt_text(w.ecc_uncorrected_volatile));
  if (f.has(Reason::RowRemapPending)) out += "row_remap_pending: a remap waits for a GPU reset; ";
  if (f.has(Reason::RowRemapFailure)) out += "row_remap_failure: a row remap failed; ";
  if (f.has(Reason::Xid)) {
    out += "xid:";
    for (const auto& x : w.xids)
      out += fmt::format(" {}({}{})", x.name.empty() ? std::to_string(x.code) : x.name, x.action,
                         x.critical ? ",critical" : "");
    out += "; ";
  }
  if (f.has(Reason::NvlinkDown))
    out += fmt::format("nvlink_down: {} of the {} NVLinks it had are active; ", opt_text(w.nvlink_links_active),
                       nvlinks_seen);
  if (f.has(Reason::PcieAer))
    out += fmt::format("pcie_aer: {} fatal, {} non-fatal PCIe AER error(s) on its address; ", w.pcie_aer_fatal,
                       w.pcie_aer_non_fatal);
}

}  // namespace gcm::detector
