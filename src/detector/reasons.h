// The fixed vocabulary of why a GPU is not healthy. It is a contract: the names are Prometheus label values
// (gcm_gpu_health_reason{reason=...}), LOG record text and docs/reference/detector.md entries that alert rules match
// on, so a name is never renamed or reused; a new reason is appended before Count.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gcm::detector {

enum class Reason : uint8_t {
  PeerSlow,         // SM clock below the job's other GPUs on the node
  HwSlowdown,       // HW_SLOWDOWN clock event for most of the window
  HwThermal,        // HW_THERMAL_SLOWDOWN for most of the window
  PowerBrake,       // HW_POWER_BRAKE_SLOWDOWN for most of the window
  PcieDegraded,     // link below its maximum generation or width while busy
  PcieReplays,      // PCIe replays above the bound
  NvlinkErrors,     // NVLink replay/recovery errors, or CRC errors above the bound
  EccDbe,           // uncorrected (double-bit) ECC errors
  RowRemapPending,  // a row remap waits for a GPU reset
  RowRemapFailure,  // a row remap failed: the memory cannot be repaired
  Xid,              // an XID whose catalogue action is not IGNORE
  Lost,             // GPU_IS_LOST or gone for several rounds
  NotResponding,    // an NVML call timed out
  PcieAer,          // the kernel logged a fatal or non-fatal PCIe AER error on the GPU's address
  NvlinkDown,       // fewer NVLinks active than the GPU had (a link went inactive, with or without errors)
  RankSlow,         // the job's rank on this GPU is slower than its other ranks on the node (its own step times)
  Count
};

inline constexpr int kReasonCount = static_cast<int>(Reason::Count);

const char* reason_name(Reason r);
std::optional<Reason> parse_reason(std::string_view name);

static_assert(kReasonCount <= 32, "ReasonSet holds 32 reasons");

// Why the node, rather than one of its GPUs, is not healthy (gcm_node_health_state{reason=...}): the same
// contract as Reason. "peer_slow_node" is taken too: the cross-node Prometheus rules use it for a node slower than
// its job's other nodes (deploy/prometheus/rules/gcm-peer-node.yml), so no agent reason may be called that.
enum class NodeReason : uint8_t {
  SxidFatal,       // a fatal NVSwitch SXid: the NVLink fabric through that switch is unusable until a reset
  PcieAer,         // a fatal or non-fatal PCIe AER error on an address that is none of the node's GPUs
  MceUncorrected,  // an uncorrected or fatal machine check (CPU, cache, memory)
  IbLinkDown,      // an InfiniBand port that was up went down and has not come back
  FabricManager,   // an NVSwitch system whose Fabric Manager is not running, or whose GPUs' fabric is not ready
  Count
};

inline constexpr int kNodeReasonCount = static_cast<int>(NodeReason::Count);

const char* node_reason_name(NodeReason r);
std::optional<NodeReason> parse_node_reason(std::string_view name);

// A small set of reasons, one bit each: copied every window for every GPU, so it must not allocate.
class ReasonSet {
 public:
  void add(Reason r) { bits_ |= bit(r); }
  void remove(Reason r) { bits_ &= ~bit(r); }
  bool has(Reason r) const { return (bits_ & bit(r)) != 0; }
  bool empty() const { return bits_ == 0; }
  bool intersects(ReasonSet o) const { return (bits_ & o.bits_) != 0; }
  ReasonSet& operator|=(ReasonSet o) {
    bits_ |= o.bits_;
    return *this;
  }
  friend bool operator==(ReasonSet a, ReasonSet b) { return a.bits_ == b.bits_; }
  uint32_t bits() const { return bits_; }
  // "peer_slow,hw_slowdown" in vocabulary order; "" when empty.
  std::string to_string() const;

 private:
  static uint32_t bit(Reason r) { return 1u << static_cast<unsigned>(r); }
  uint32_t bits_ = 0;
};

}  // namespace gcm::detector
