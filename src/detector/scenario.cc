#include "detector/scenario.h"

#include <fmt/format.h>

#include "detector/detector.h"

namespace gcm::detector::harness {

namespace {

constexpr double kFaultStart = 3600 + 10;

Scenario fault(std::string name, Fault kind, double magnitude, Reason reason, uint64_t seed) {
  Scenario s;
  s.name = std::move(name);
  s.node.seed = seed;
  s.node.noise.jobs = false;
  s.node.fault = {kind, 3, kFaultStart, magnitude};
  s.duration_s = 2 * 3600;
  s.expect_detection = kind != Fault::NodeSlow;
  s.expected_reason = reason;
  return s;
}

}  // namespace

Scenario slowdown_scenario(double fraction, uint64_t seed) {
  return fault(fmt::format("sm_clock -{:g}%", 100 * fraction), Fault::SmClockSlow, fraction, Reason::PeerSlow, seed);
}

std::vector<Scenario> fault_scenarios(uint64_t seed) {
  return {
      slowdown_scenario(0.05, seed),
      slowdown_scenario(0.10, seed),
      slowdown_scenario(0.30, seed),
      fault("hw_slowdown", Fault::HwSlowdown, 0, Reason::HwSlowdown, seed),
      fault("hw_thermal", Fault::HwThermal, 0, Reason::HwThermal, seed),
      fault("pcie x8", Fault::PcieWidthX8, 0, Reason::PcieDegraded, seed),
      fault("pcie gen3", Fault::PcieGen3, 0, Reason::PcieDegraded, seed),
      fault("nvlink crc 200/s", Fault::NvlinkCrc200, 0, Reason::NvlinkErrors, seed),
      fault("row remap pending", Fault::RowRemapPending, 0, Reason::RowRemapPending, seed),
      fault("ecc dbe", Fault::EccDbe, 0, Reason::EccDbe, seed),
      fault("xid 79", Fault::Xid79, 0, Reason::Xid, seed),
      fault("nvlink down (1 of 18)", Fault::NvlinkDown, 0, Reason::NvlinkDown, seed),
      fault("node 15% slower (central)", Fault::NodeSlow, 0.15, Reason::PeerSlow, seed),
  };
}

Scenario clean_scenario(double days, uint64_t seed) {
  Scenario s;
  s.name = fmt::format("clean, {:g} node-days", days);
  s.node.seed = seed;
  s.duration_s = days * 86400;
  return s;
}

ScenarioResult run_scenario(const Scenario& s, const DetectorConfig& c) {
  ScenarioResult r;
  r.name = s.name;
  r.node_days = s.duration_s / 86400;
  NodeSimulator sim(s.node);
  Detector det(c);
  std::vector<GpuVerdict> out;
  const FaultSpec& f = s.node.fault;
  int window = 0, fault_window = -1;
  while (sim.now_s() < s.duration_s) {
    const auto& windows = sim.next();
    det.observe(windows, out);
    bool fault_on = f.kind != Fault::None && sim.now_s() > f.start_s;
    if (fault_on && fault_window < 0) fault_window = window;
    for (const auto& v : out) {
      bool faulty = fault_on && (v.gpu == f.gpu || f.kind == Fault::NodeSlow);
      if (faulty && s.expect_detection && r.detect_windows < 0 && v.state >= HealthState::Degraded) {
        r.detect_windows = window - fault_window + 1;
        r.detect_seconds = sim.now_s() - f.start_s;
        r.detect_state = static_cast<int>(v.state);
        r.expected_reason_seen = v.reasons.has(s.expected_reason);
      }
      if (faulty && s.expect_detection) continue;
      if (!v.event || v.event->to <= v.event->from) continue;
      if (v.event->to == HealthState::Suspect) ++r.false_suspect;
      if (v.event->to == HealthState::Degraded) ++r.false_degraded;
      if (v.event->to == HealthState::Failed) ++r.false_failed;
    }
    ++window;
  }
  return r;
}

}  // namespace gcm::detector::harness
