#include "gpu/sample_device.h"

#include <fmt/format.h>

namespace gcm {
namespace {

// Runs NVML calls for one device and turns their return codes into "value or null".
class Caller {
 public:
  Caller(const NvmlLibrary& lib, CallWatch& watch, GpuSample& out) : lib_(lib), watch_(watch), out_(out) {}

  // True when `fn` is present and returned SUCCESS. NOT_SUPPORTED (and its kin) is a plain "no value"; other
  // errors are remembered in the sample; GPU_IS_LOST aborts the sample.
  template <typename Fn, typename... Args>
  bool call(const char* name, Fn* fn, Args... args) {
    if (!fn) return false;
    watch_.begin(name);
    nvml::Return rc = fn(args...);
    watch_.end();
    return check(name, rc);
  }

  // Like call() but INSUFFICIENT_SIZE also counts as an answer (size queries).
  template <typename Fn, typename... Args>
  nvml::Return call_raw(const char* name, Fn* fn, Args... args) {
    if (!fn) return nvml::ERROR_FUNCTION_NOT_FOUND;
    watch_.begin(name);
    nvml::Return rc = fn(args...);
    watch_.end();
    if (rc == nvml::ERROR_GPU_IS_LOST) throw GpuLost(fmt::format("{}: GPU is lost", name));
    return rc;
  }

  // An `unsigned int` out-parameter read as a value (the out-parameter goes last, as in every NVML getter).
  template <typename Fn, typename... Args>
  std::optional<int64_t> uint_value(const char* name, Fn* fn, Args... args) {
    unsigned v = 0;
    if (call(name, fn, args..., &v)) return static_cast<int64_t>(v);
    return std::nullopt;
  }

  bool check(const char* name, nvml::Return rc) {
    switch (rc) {
      case nvml::SUCCESS:
        return true;
      case nvml::ERROR_GPU_IS_LOST:
        throw GpuLost(fmt::format("{}: GPU is lost", name));
      case nvml::ERROR_NOT_SUPPORTED:
      case nvml::ERROR_FUNCTION_NOT_FOUND:
      case nvml::ERROR_NOT_FOUND:
      case nvml::ERROR_NO_DATA:
        return false;
      default:
        out_.errors.push_back(fmt::format("{}: {}", name, lib_.error_string(rc)));
        return false;
    }
  }

 private:
  const NvmlLibrary& lib_;
  CallWatch& watch_;
  GpuSample& out_;
};

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
  nvml::Return rc = c.call_raw("nvmlDeviceGetComputeRunningProcesses_v3", a.DeviceGetComputeRunningProcesses, d,
                               &count, static_cast<nvml::ProcessInfo*>(nullptr));
  if (rc == nvml::SUCCESS) {
    out.processes.emplace();
    return;
  }
  for (int attempt = 0; attempt < 3 && rc == nvml::ERROR_INSUFFICIENT_SIZE; ++attempt) {
    std::vector<nvml::ProcessInfo> infos(count + 8);
    unsigned n = static_cast<unsigned>(infos.size());
    rc = c.call_raw("nvmlDeviceGetComputeRunningProcesses_v3", a.DeviceGetComputeRunningProcesses, d, &n,
                    infos.data());
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

void sample_nvlinks(Caller& c, const nvml::Api& a, nvml::Device d, GpuSample& out) {
  for (unsigned link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    unsigned state = 0;
    if (!c.call("nvmlDeviceGetNvLinkState", a.DeviceGetNvLinkState, d, link, &state)) break;
    NvLinkSample l;
    l.link = link;
    l.active = state != 0;
    unsigned long long v = 0;
    auto counter = [&](unsigned kind) -> std::optional<uint64_t> {
      if (c.call("nvmlDeviceGetNvLinkErrorCounter", a.DeviceGetNvLinkErrorCounter, d, link, kind, &v)) return v;
      return std::nullopt;
    };
    l.replay_errors = counter(nvml::NVLINK_REPLAY);
    l.recovery_errors = counter(nvml::NVLINK_RECOVERY);
    l.crc_flit_errors = counter(nvml::NVLINK_CRC_FLIT);
    l.crc_data_errors = counter(nvml::NVLINK_CRC_DATA);
    out.nvlinks.push_back(l);
  }
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

}  // namespace

void sample_device(const NvmlLibrary& lib, nvml::Device d, CallWatch& watch, const SampleScope& scope,
                   GpuSample& out) {
  const nvml::Api& a = lib.api();
  Caller c(lib, watch, out);
  unsigned u = 0, u2 = 0;
  unsigned long long ull = 0;

  if (scope.static_info) {
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

  // The reference's DeviceMetrics, in its order.
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
    out.power_used_percent = static_cast<int64_t>(static_cast<double>(*out.power_draw_mw) /
                                                  static_cast<double>(*out.power_limit_mw) * 100);
  out.retired_pages_single = retired_pages(c, a, d, nvml::RETIRED_MULTIPLE_SINGLE_BIT);
  out.retired_pages_double = retired_pages(c, a, d, nvml::RETIRED_DOUBLE_BIT);
  sample_processes(c, a, d, out);
  if (!scope.extended) return;

  if (c.call("nvmlDeviceGetTotalEnergyConsumption", a.DeviceGetTotalEnergyConsumption, d, &ull)) out.energy_mj = ull;
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
  if (c.call("nvmlDeviceGetCurrentClocksEventReasons", a.DeviceGetCurrentClocksThrottleReasons, d, &ull))
    out.clock_event_reasons = ull;

  out.pcie_link_gen = c.uint_value("nvmlDeviceGetCurrPcieLinkGeneration", a.DeviceGetCurrPcieLinkGeneration, d);
  out.pcie_link_width = c.uint_value("nvmlDeviceGetCurrPcieLinkWidth", a.DeviceGetCurrPcieLinkWidth, d);
  out.pcie_link_gen_max =
      c.uint_value("nvmlDeviceGetMaxPcieLinkGeneration", a.DeviceGetMaxPcieLinkGeneration, d);
  out.pcie_link_width_max = c.uint_value("nvmlDeviceGetMaxPcieLinkWidth", a.DeviceGetMaxPcieLinkWidth, d);
  out.pcie_replay_count = c.uint_value("nvmlDeviceGetPcieReplayCounter", a.DeviceGetPcieReplayCounter, d);
  out.pcie_tx_kbps = c.uint_value("nvmlDeviceGetPcieThroughput", a.DeviceGetPcieThroughput, d, nvml::PCIE_TX);
  out.pcie_rx_kbps = c.uint_value("nvmlDeviceGetPcieThroughput", a.DeviceGetPcieThroughput, d, nvml::PCIE_RX);
  sample_nvlinks(c, a, d, out);

  if (c.call("nvmlDeviceGetEccMode", a.DeviceGetEccMode, d, &u, &u2)) {
    out.ecc_mode_current = u;
    out.ecc_mode_pending = u2;
  }
  auto ecc = [&](unsigned type, unsigned counter) -> std::optional<uint64_t> {
    if (c.call("nvmlDeviceGetTotalEccErrors", a.DeviceGetTotalEccErrors, d, type, counter, &ull)) return ull;
    return std::nullopt;
  };
  out.ecc_volatile_corrected = ecc(nvml::ECC_CORRECTED, nvml::ECC_VOLATILE);
  out.ecc_volatile_uncorrected = ecc(nvml::ECC_UNCORRECTED, nvml::ECC_VOLATILE);
  out.ecc_aggregate_corrected = ecc(nvml::ECC_CORRECTED, nvml::ECC_AGGREGATE);
  out.ecc_aggregate_uncorrected = ecc(nvml::ECC_UNCORRECTED, nvml::ECC_AGGREGATE);
  out.retired_pages_pending =
      c.uint_value("nvmlDeviceGetRetiredPagesPendingStatus", a.DeviceGetRetiredPagesPendingStatus, d);
  unsigned corr = 0, unc = 0, pend = 0, fail = 0;
  if (c.call("nvmlDeviceGetRemappedRows", a.DeviceGetRemappedRows, d, &corr, &unc, &pend, &fail)) {
    out.remapped_rows_correctable = corr;
    out.remapped_rows_uncorrectable = unc;
    out.remapped_rows_pending = pend;
    out.remapped_rows_failure = fail;
  }
  out.fan_speed_percent = c.uint_value("nvmlDeviceGetFanSpeed", a.DeviceGetFanSpeed, d);
  out.performance_state = c.uint_value("nvmlDeviceGetPerformanceState", a.DeviceGetPerformanceState, d);
  out.persistence_mode = c.uint_value("nvmlDeviceGetPersistenceMode", a.DeviceGetPersistenceMode, d);
  nvml::FieldValue fv{};
  fv.field_id = nvml::kFieldGpuRecoveryAction;
  if (c.call("nvmlDeviceGetFieldValues", a.DeviceGetFieldValues, d, 1, &fv) && c.check("GPU_RECOVERY_ACTION field", fv.nvml_return))
    out.recovery_action = fv.value_type == 3 ? static_cast<int64_t>(fv.value.ull) : static_cast<int64_t>(fv.value.ui);
  sample_mig(c, a, d, out);
}

std::vector<std::string> clock_event_reason_names(uint64_t mask) {
  static constexpr std::pair<uint64_t, const char*> kBits[] = {
      {0x1, "gpu_idle"},           {0x2, "applications_clocks_setting"}, {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},        {0x10, "sync_boost"},                 {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"},  {0x100, "display_clock_setting"},
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
    case 0: return "none";
    case 1: return "gpu_reset";
    case 2: return "node_reboot";
    case 3: return "drain_p2p";
    case 4: return "drain_and_reset";
    default: return fmt::format("unknown_{}", action);
  }
}

}  // namespace gcm
