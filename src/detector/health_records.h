// The detector's verdicts as records. The METRIC schemas render, through any sink, these contract names:
//   gcm_gpu_health_state{gpu,uuid}                0 ok, 1 suspect, 2 degraded, 3 failed
//   gcm_gpu_health_reason{gpu,uuid,reason}        1 while the reason holds, 0 otherwise (every reason, always)
//   gcm_gpu_peer_deviation_ratio{gpu,uuid,signal} baseline-corrected deviation from the peers' median
//   gcm_gpu_peer_zscore{gpu,uuid,signal}          robust z-score against the peers
// The peer series exist only for windows where the GPU was compared: a stale comparison is worse than none.
// The LOG schema GpuHealthEvent is one row per state change, with the evidence.
#pragma once

#include <string>
#include <vector>

#include "core/record.h"
#include "detector/verdict.h"

namespace gcm::detector {

extern const LazySchema kGpuHealthState;
extern const LazySchema kGpuHealthReason;
extern const LazySchema kGpuPeerDeviation;
extern const LazySchema kGpuHealthEvent;

// Appends one round's METRIC records: per GPU one state record, one record per reason of the vocabulary, and one
// per compared signal. Reasons are emitted as 0 too, so an alert on `== 1` resolves when the reason clears and a
// missing series means a missing GPU, not a healthy one.
void append_health_metrics(const std::vector<GpuVerdict>& verdicts, std::vector<Record>& out);

// Appends a LOG record for each verdict that carries an event (a state change).
void append_health_events(const std::vector<GpuVerdict>& verdicts, const std::string& hostname,
                          std::vector<Record>& out);

}  // namespace gcm::detector
