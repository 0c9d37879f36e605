#include "gpu/sample_device.h"

#include <fmt/format.h>

#include <map>

#include "gpu/field_batch.h"

namespace gcm {
namespace {

std::optional<std::string> read_string(Caller& c, const char* name, nvml::Return (*fn)(nvml::Device, char*, unsigned),
                                       nvml::Device d, unsigned size) {
  char buf[128] = {};
  if (size > sizeof(buf)) size = sizeof(buf);
  if (!c.call(name, fn, d, buf, size)) return std::nullopt;
  buf[sizeof(buf) - 1] = '\0';
  return std::string(buf);
}

// len(nvmlDeviceGetRetiredPages(...)) as the reference computes it: a size query, 0 on any error.
int64_t retired_pages(Caller& c, const nvml::Api& a, nvml::Device d, unsigned cause) {
  unsigned count = 0;
  nvml::Return rc = c.call_raw("nvmlDeviceGetRetiredPages", a.DeviceGetRetiredPages, d, cause, &count,
                               static_cast<unsigned long long*>(nullptr));
  if (rc == nvml::SUCCESS || rc == nvml::ERROR_INSUFFICIENT_SIZE) return count;
  return 0;
}

void sample_processes(Caller& c, const nvml::Api& a, nvml::Device d, GpuSample& out) {
  // Ask for the count, then fetch; processes may start in between, so retry a few times with headroom.
  unsigned count = 0;
  nvml::Return rc = c.call_raw("nvmlDeviceGetComputeRunningProcesses_v3", a.DeviceGetComputeRunningProcesses, d, &count,
                               static_cast<nvml::ProcessInfo*>(nullptr));
  if (rc == nvml::SUCCESS) {
    out.processes.emplace();
    return;
  }
  for (int attempt = 0; attempt < 3 && rc == nvml::ERROR_INSUFFICIENT_SIZE; ++attempt) {
    std::vector<nvml::ProcessInfo> infos(count + 8);
    unsigned n = static_cast<unsigned>(infos.size());
    rc = c.call_raw("nvmlDeviceGetComputeRunningProcesses_v3", a.DeviceGetComputeRunningProcesses, d, &n, infos.data());
    if (rc == nvml::SUCCESS) {
      out.processes.emplace();
      for (unsigned i = 0; i < n && i < infos.size(); ++i) {
        GpuProcess p;
        p.pid = infos[i].pid;
        // NVML_VALUE_NOT_AVAILABLE is (unsigned long long)-1.
        if (infos[i].used_gpu_memory != ~0ULL) p.used_memory_bytes = infos[i].used_gpu_memory;
        out.processes->push_back(p);
      }
      return;
    }
    count = n;
  }
  c.check("nvmlDeviceGetComputeRunningProcesses_v3", rc);
}

// The links the GPU has (the list ends at the first link it answers NOT_SUPPORTED for) and whether each is up.
void sample_nvlink_states(Caller& c, const nvml::Api& a, nvml::Device d, GpuSample& out) {
  for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    unsigned state = 0;
    if (!c.call("nvmlDeviceGetNvLinkState", a.DeviceGetNvLinkState, d, link, &state)) break;
    NvLinkSample l;
    l.link = link;
    l.active = state != 0;
    out.nvlinks.push_back(l);
  }
}

// The extended values that NVML also has as fields, asked for in one batch; each one the batch does not give
// (the driver lacks the call, the field answers an error, or it is a link past the field ids' 12) is read with
// its own getter, as before the batch, so a value never depends on the path it came by.
class BatchedValues {
 public:
  BatchedValues(Caller& c, const nvml::Api& a, nvml::Device d, const GpuSample& out) : c_(c), a_(a), d_(d) {
    for (unsigned id : kScalars) index_[id] = batch_.add(id);
    for (const auto& l : out.nvlinks)
      if (l.link < nvml::field::kNvLinkFieldLinks)
        for (unsigned k = 0; k < 4; ++k) link_index_[l.link][k] = batch_.add(nvml::field::nvlink_error(k, l.link));
    batch_.fetch(c_, a_, d_);
  }

  // The field's value, else what `getter` reads.
  template <typename Getter>
  std::optional<uint64_t> get(unsigned field_id, Getter getter) {
    if (auto v = batch_.value(index_.at(field_id), c_)) return v;
    return getter();
  }
  std::optional<uint64_t> get(unsigned field_id) { return batch_.value(index_.at(field_id), c_); }
  nvml::Return field_return(unsigned field_id) const { return batch_.field_return(index_.at(field_id)); }

  std::optional<uint64_t> nvlink_counter(unsigned link, unsigned kind) {
    if (link < nvml::field::kNvLinkFieldLinks)
      if (auto v = batch_.value(link_index_[link][kind], c_)) return v;
    unsigned long long v = 0;
    if (c_.call("nvmlDeviceGetNvLinkErrorCounter", a_.DeviceGetNvLinkErrorCounter, d_, link, kind, &v)) return v;
    return std::nullopt;
  }

 private:
  static constexpr unsigned kScalars[] = {
      nvml::field::kTotalEnergy,     nvml::field::kPcieReplayCounter, nvml::field::kEccCurrent,
      nvml::field::kEccPending,      nvml::field::kEccSbeVolTotal,    nvml::field::kEccDbeVolTotal,
      nvml::field::kEccSbeAggTotal,  nvml::field::kEccDbeAggTotal,    nvml::field::kRetiredPending,
      nvml::field::kRemappedCor,     nvml::field::kRemappedUnc,       nvml::field::kRemappedPending,
      nvml::field::kRemappedFailure, nvml::kFieldGpuRecoveryAction,
  };
  Caller& c_;
  const nvml::Api& a_;
  nvml::Device d_;
  FieldBatch batch_;
  std::map<unsigned, size_t> index_;
  size_t link_index_[nvml::field::kNvLinkFieldLinks][4] = {};
};

void sample_nvlink_counters(BatchedValues& b, GpuSample& out) {
  for (auto& l : out.nvlinks) {
    l.replay_errors = b.nvlink_counter(l.link, nvml::NVLINK_REPLAY);
    l.recovery_errors = b.nvlink_counter(l.link, nvml::NVLINK_RECOVERY);
    l.crc_flit_errors = b.nvlink_counter(l.link, nvml::NVLINK_CRC_FLIT);
    l.crc_data_errors = b.nvlink_counter(l.link, nvml::NVLINK_CRC_DATA);
  }
}

std::optional<int64_t> as_int(std::optional<uint64_t> v) {
  return v ? std::optional<int64_t>(static_cast<int64_t>(*v)) : std::nullopt;
}

void sample_mig(Caller& c, const nvml::Api& a, nvml::Device d, GpuSample& out) {
  unsigned cur = 0, pending = 0;
  if (!c.call("nvmlDeviceGetMigMode", a.DeviceGetMigMode, d, &cur, &pending)) return;
  out.mig_mode_current = cur;
  out.mig_mode_pending = pending;
  if (cur == 0) return;
  unsigned max = 0;
  if (!c.call("nvmlDeviceGetMaxMigDeviceCount", a.DeviceGetMaxMigDeviceCount, d, &max)) return;
  for (unsigned i = 0; i < max; ++i) {
    nvml::Device mig = nullptr;
    // NOT_FOUND: no MIG device in this slot.
    if (!c.call("nvmlDeviceGetMigDeviceHandleByIndex", a.DeviceGetMigDeviceHandleByIndex, d, i, &mig)) continue;
    MigDeviceSample m;
    m.index = i;
    m.uuid = read_string(c, "nvmlDeviceGetUUID", a.DeviceGetUUID, mig, nvml::kUuidBuffer);
    nvml::Memory mem{};
    if (c.call("nvmlDeviceGetMemoryInfo", a.DeviceGetMemoryInfo, mig, &mem)) {
      m.memory_total_bytes = mem.total;
      m.memory_used_bytes = mem.used;
    }
    out.mig_devices.push_back(std::move(m));
  }
}

// A getter for BatchedValues::get: the single call that answers a field when the batched query did not.
template <class Value, class Fn, class... Args>
auto single_call(Caller& c, const char* name, Fn fn, Args... args) {
  return [&c, name, fn, args...]() -> std::optional<uint64_t> {
    Value v = 0;
    if (c.call(name, fn, args..., &v)) return v;
    return std::nullopt;
  };
}

// What never changes while the driver is loaded: names, UUID, serial, VBIOS, PCI address, minor number.
void sample_static_info(Caller& c, const nvml::Api& a, nvml::Device d, GpuSample& out) {
  out.name = read_string(c, "nvmlDeviceGetName", a.DeviceGetName, d, nvml::kDeviceNameBuffer);
  out.uuid = read_string(c, "nvmlDeviceGetUUID", a.DeviceGetUUID, d, nvml::kUuidBuffer);
  out.serial = read_string(c, "nvmlDeviceGetSerial", a.DeviceGetSerial, d, nvml::kSerialBuffer);
  out.vbios_version = read_string(c, "nvmlDeviceGetVbiosVersion", a.DeviceGetVbiosVersion, d, nvml::kVbiosBuffer);
  nvml::PciInfo pci{};
  if (c.call("nvmlDeviceGetPciInfo_v3", a.DeviceGetPciInfo, d, &pci)) {
    pci.bus_id[sizeof(pci.bus_id) - 1] = '\0';
    out.pci_bus_id = std::string(pci.bus_id);
  }
  out.minor_number = c.uint_value("nvmlDeviceGetMinorNumber", a.DeviceGetMinorNumber, d);
}

// Utilisation, memory, temperature and power: the reference's DeviceMetrics, in its order.
void sample_device_metrics(Caller& c, const nvml::Api& a, nvml::Device d, GpuSample& out) {
  nvml::Utilization util{};
  if (c.call("nvmlDeviceGetUtilizationRates", a.DeviceGetUtilizationRates, d, &util)) {
    out.gpu_util = util.gpu;
    out.mem_util = util.memory;
  }
  nvml::Memory mem{};
  if (c.call("nvmlDeviceGetMemoryInfo", a.DeviceGetMemoryInfo, d, &mem)) {
    out.memory_total_bytes = mem.total;
    out.memory_used_bytes = mem.used;
    if (mem.total > 0)
      out.mem_used_percent = static_cast<int64_t>(static_cast<double>(mem.used) / static_cast<double>(mem.total) * 100);
  }
  out.temperature = c.uint_value("nvmlDeviceGetTemperature", a.DeviceGetTemperature, d, nvml::kTemperatureGpu);
  out.power_draw_mw = c.uint_value("nvmlDeviceGetPowerUsage", a.DeviceGetPowerUsage, d);
  out.power_limit_mw = c.uint_value("nvmlDeviceGetEnforcedPowerLimit", a.DeviceGetEnforcedPowerLimit, d);
  if (out.power_draw_mw && out.power_limit_mw && *out.power_limit_mw > 0)
    out.power_used_percent =
        static_cast<int64_t>(static_cast<double>(*out.power_draw_mw) / static_cast<double>(*out.power_limit_mw) * 100);
  out.retired_pages_single = retired_pages(c, a, d, nvml::RETIRED_MULTIPLE_SINGLE_BIT);
  out.retired_pages_double = retired_pages(c, a, d, nvml::RETIRED_DOUBLE_BIT);
}

// Energy, clocks and their event reasons, the PCIe link and its counters.
void sample_clocks_and_pcie(Caller& c, const nvml::Api& a, nvml::Device d, BatchedValues& batch, GpuSample& out) {
  out.energy_mj = batch.get(
      nvml::field::kTotalEnergy,
      single_call<unsigned long long>(c, "nvmlDeviceGetTotalEnergyConsumption", a.DeviceGetTotalEnergyConsumption, d));
  auto clock = [&](const char* name, auto fn, unsigned type) { return c.uint_value(name, fn, d, type); };
  out.clock_graphics_mhz = clock("nvmlDeviceGetClockInfo", a.DeviceGetClockInfo, nvml::CLOCK_GRAPHICS);
  out.clock_sm_mhz = clock("nvmlDeviceGetClockInfo", a.DeviceGetClockInfo, nvml::CLOCK_SM);
  out.clock_mem_mhz = clock("nvmlDeviceGetClockInfo", a.DeviceGetClockInfo, nvml::CLOCK_MEM);
  out.app_clock_graphics_mhz =
      clock("nvmlDeviceGetApplicationsClock", a.DeviceGetApplicationsClock, nvml::CLOCK_GRAPHICS);
  out.app_clock_mem_mhz = clock("nvmlDeviceGetApplicationsClock", a.DeviceGetApplicationsClock, nvml::CLOCK_MEM);
  out.max_clock_graphics_mhz = clock("nvmlDeviceGetMaxClockInfo", a.DeviceGetMaxClockInfo, nvml::CLOCK_GRAPHICS);
  out.max_clock_sm_mhz = clock("nvmlDeviceGetMaxClockInfo", a.DeviceGetMaxClockInfo, nvml::CLOCK_SM);
  out.max_clock_mem_mhz = clock("nvmlDeviceGetMaxClockInfo", a.DeviceGetMaxClockInfo, nvml::CLOCK_MEM);
  unsigned long long ull = 0;
  if (c.call("nvmlDeviceGetCurrentClocksEventReasons", a.DeviceGetCurrentClocksThrottleReasons, d, &ull))
    out.clock_event_reasons = ull;

  out.pcie_link_gen = c.uint_value("nvmlDeviceGetCurrPcieLinkGeneration", a.DeviceGetCurrPcieLinkGeneration, d);
  out.pcie_link_width = c.uint_value("nvmlDeviceGetCurrPcieLinkWidth", a.DeviceGetCurrPcieLinkWidth, d);
  out.pcie_link_gen_max = c.uint_value("nvmlDeviceGetMaxPcieLinkGeneration", a.DeviceGetMaxPcieLinkGeneration, d);
  out.pcie_link_width_max = c.uint_value("nvmlDeviceGetMaxPcieLinkWidth", a.DeviceGetMaxPcieLinkWidth, d);
  out.pcie_replay_count =
      as_int(batch.get(nvml::field::kPcieReplayCounter,
                       single_call<unsigned>(c, "nvmlDeviceGetPcieReplayCounter", a.DeviceGetPcieReplayCounter, d)));
  out.pcie_tx_kbps = c.uint_value("nvmlDeviceGetPcieThroughput", a.DeviceGetPcieThroughput, d, nvml::PCIE_TX);
  out.pcie_rx_kbps = c.uint_value("nvmlDeviceGetPcieThroughput", a.DeviceGetPcieThroughput, d, nvml::PCIE_RX);
  sample_nvlink_counters(batch, out);
}

// ECC mode and counters, retired pages pending, remapped rows: from the batch where the driver answers it.
void sample_memory_errors(Caller& c, const nvml::Api& a, nvml::Device d, BatchedValues& batch, GpuSample& out) {
  auto ecc_mode = batch.get(nvml::field::kEccCurrent);
  auto ecc_pending = batch.get(nvml::field::kEccPending);
  if (ecc_mode && ecc_pending) {
    out.ecc_mode_current = static_cast<int64_t>(*ecc_mode);
    out.ecc_mode_pending = static_cast<int64_t>(*ecc_pending);
  } else {
    unsigned current = 0, pending = 0;
    if (c.call("nvmlDeviceGetEccMode", a.DeviceGetEccMode, d, &current, &pending)) {
      out.ecc_mode_current = current;
      out.ecc_mode_pending = pending;
    }
  }
  auto ecc = [&](unsigned field, unsigned type, unsigned counter) {
    return batch.get(field, single_call<unsigned long long>(c, "nvmlDeviceGetTotalEccErrors", a.DeviceGetTotalEccErrors,
                                                            d, type, counter));
  };
  out.ecc_volatile_corrected = ecc(nvml::field::kEccSbeVolTotal, nvml::ECC_CORRECTED, nvml::ECC_VOLATILE);
  out.ecc_volatile_uncorrected = ecc(nvml::field::kEccDbeVolTotal, nvml::ECC_UNCORRECTED, nvml::ECC_VOLATILE);
  out.ecc_aggregate_corrected = ecc(nvml::field::kEccSbeAggTotal, nvml::ECC_CORRECTED, nvml::ECC_AGGREGATE);
  out.ecc_aggregate_uncorrected = ecc(nvml::field::kEccDbeAggTotal, nvml::ECC_UNCORRECTED, nvml::ECC_AGGREGATE);
  out.retired_pages_pending =
      as_int(batch.get(nvml::field::kRetiredPending, single_call<unsigned>(c, "nvmlDeviceGetRetiredPagesPendingStatus",
                                                                           a.DeviceGetRetiredPagesPendingStatus, d)));
  auto corr = batch.get(nvml::field::kRemappedCor), unc = batch.get(nvml::field::kRemappedUnc),
       pend = batch.get(nvml::field::kRemappedPending), fail = batch.get(nvml::field::kRemappedFailure);
  if (corr && unc && pend && fail) {
    out.remapped_rows_correctable = as_int(corr);
    out.remapped_rows_uncorrectable = as_int(unc);
    out.remapped_rows_pending = as_int(pend);
    out.remapped_rows_failure = as_int(fail);
  } else {
    unsigned rc = 0, ru = 0, rp = 0, rf = 0;
    if (c.call("nvmlDeviceGetRemappedRows", a.DeviceGetRemappedRows, d, &rc, &ru, &rp, &rf)) {
      out.remapped_rows_correctable = rc;
      out.remapped_rows_uncorrectable = ru;
      out.remapped_rows_pending = rp;
      out.remapped_rows_failure = rf;
    }
  }
}

}  // namespace

void sample_device(const NvmlLibrary& lib, nvml::Device d, CallWatch& watch, const SampleScope& scope, GpuSample& out,
                   GpmState* gpm) {
  const nvml::Api& a = lib.api();
  Caller c(lib, watch, out);
  if (scope.static_info) sample_static_info(c, a, d, out);
  sample_device_metrics(c, a, d, out);
  sample_processes(c, a, d, out);
  if (!scope.extended) return;

  sample_nvlink_states(c, a, d, out);
  BatchedValues batch(c, a, d, out);
  sample_clocks_and_pcie(c, a, d, batch, out);
  sample_memory_errors(c, a, d, batch, out);
  out.fan_speed_percent = c.uint_value("nvmlDeviceGetFanSpeed", a.DeviceGetFanSpeed, d);
  out.performance_state = c.uint_value("nvmlDeviceGetPerformanceState", a.DeviceGetPerformanceState, d);
  out.persistence_mode = c.uint_value("nvmlDeviceGetPersistenceMode", a.DeviceGetPersistenceMode, d);
  // No getter of its own: the field is the only way (its errors other than NOT_SUPPORTED are reported).
  out.recovery_action = as_int(batch.get(nvml::kFieldGpuRecoveryAction));
  if (!out.recovery_action) {
    nvml::Return rc = batch.field_return(nvml::kFieldGpuRecoveryAction);
    if (rc != nvml::ERROR_UNINITIALIZED) c.check("GPU_RECOVERY_ACTION field", rc);
  }
  sample_mig(c, a, d, out);
  if (gpm) gpm->sample(c, d, out);
}

std::vector<std::string> clock_event_reason_names(uint64_t mask) {
  static constexpr std::pair<uint64_t, const char*> kBits[] = {
      {0x1, "gpu_idle"},
      {0x2, "applications_clocks_setting"},
      {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},
      {0x10, "sync_boost"},
      {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"},
      {0x80, "hw_power_brake_slowdown"},
      {0x100, "display_clock_setting"},
  };
  std::vector<std::string> names;
  uint64_t known = 0;
  for (auto [bit, name] : kBits) {
    known |= bit;
    if (mask & bit) names.emplace_back(name);
  }
  if (mask & ~known) names.push_back(fmt::format("unknown_0x{:x}", mask & ~known));
  return names;
}

std::string recovery_action_name(int64_t action) {
  switch (action) {
    case 0:
      return "none";
    case 1:
      return "gpu_reset";
    case 2:
      return "node_reboot";
    case 3:
      return "drain_p2p";
    case 4:
      return "drain_and_reset";
    default:
      return fmt::format("unknown_{}", action);
  }
}

}  // namespace gcm
