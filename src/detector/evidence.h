// The one-line evidence of a verdict, for people and LOG records: the state, the windows flagged, the peer
// comparison (values, peers' median, deviation, z) and each absolute rule's values. Built only when a GPU is not ok,
// so the clean path of the detector does not format text.
#pragma once

#include <string>

#include "detector/config.h"
#include "detector/gpu_window.h"
#include "detector/persistence.h"
#include "detector/throttle_span.h"
#include "detector/verdict.h"

namespace gcm::detector {

std::string build_evidence(const GpuWindow& w, const GpuVerdict& v, const ThrottleSpan& span, const Persistence& p,
                           bool node_effect, int nvlinks_seen, const DetectorConfig& c);

}  // namespace gcm::detector
