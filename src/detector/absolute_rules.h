// The rules that judge one GPU alone, against fixed bounds (no peers needed): clock-event reasons, PCIe link and
// replays, NVLink errors, ECC and row remapping, XIDs, and whether the GPU answered.
#pragma once

#include <string>

#include "detector/config.h"
#include "detector/gpu_window.h"
#include "detector/reasons.h"
#include "detector/throttle_span.h"

namespace gcm::detector {

struct AbsoluteResult {
  ReasonSet reasons;
  bool xid_needs_reset = false;  // an XID's action is in xid_failed_actions: the GPU is failed
  bool aer_fatal = false;        // a fatal PCIe AER error: the GPU is failed
};

// `span` already holds this window (see ThrottleSpan); `busy` from is_busy(); `nvlinks_seen`: the most NVLinks the
// GPU has had active since the agent started (-1 unknown).
AbsoluteResult absolute_reasons(const GpuWindow& w, bool busy, const ThrottleSpan& span, int nvlinks_seen,
                                const DetectorConfig& c);

// Appends "reason: values; " for each reason of `flagged` that these rules own, for the evidence text.
void describe_absolute(const GpuWindow& w, ReasonSet flagged, const ThrottleSpan& span, int nvlinks_seen,
                       std::string& out);

}  // namespace gcm::detector
