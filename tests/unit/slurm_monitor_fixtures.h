// The recorded Slurm 22.05 round that the slurm_monitor tests replay: sinfo, sinfo -V, sdiag and the sacct window,
// with the parameters of the round they were recorded in.
#pragma once

#include <cstdint>
#include <string>

#include "collectors/slurm_monitor.h"
#include "fixture_records.h"
#include "slurm/client.h"

namespace gcm::slurm_monitor::testing {

inline const std::string k2205 = std::string(GCM_SOURCE_DIR) + "/tests/fixtures/slurm-22.05/";

// The window of the recorded sacct-slurm-monitor-local.txt: -S 18:54:26 -E 18:56:56 (UTC) on 2026-11-29.
constexpr int64_t kNow = 1795978616;  // 2026-11-29T18:56:56Z (sdiag.txt's own timestamp)

inline slurm::CannedSlurmClient canned_2205() {
  using gcm::testing::slurp;
  slurm::CannedSlurmClient c;
  c.set_output("slurm_monitor_sinfo", slurp(k2205 + "sinfo-O-nodes.txt"));
  c.set_output("sinfo_version", slurp(k2205 + "sinfo-V.txt"));
  c.set_output("sdiag", slurp(k2205 + "sdiag.txt"));
  c.set_output("slurm_monitor_sacct", slurp(k2205 + "sacct-slurm-monitor-local.txt"));
  return c;
}

inline Params params_2205() {
  Params p;
  p.cluster = "testbed";
  p.interval = 150;
  p.now = kNow;
  return p;
}

}  // namespace gcm::slurm_monitor::testing
