#include "gpu/amdsmi_sample_device.h"

#include <cstring>
#include <limits>
#include <vector>

#include "gpu/amdsmi_caller.h"

namespace gcm {
namespace {

// amdsmi marks a value it does not have with all bits set (of the field's width, or of 16 bits in a 32-bit field).
std::optional<int64_t> amd_u32(uint32_t v) {
  if (v == std::numeric_limits<uint32_t>::max() || v == std::numeric_limits<uint16_t>::max()) return std::nullopt;
  return static_cast<int64_t>(v);
}
std::optional<uint64_t> amd_u64(uint64_t v) {
  if (v == std::numeric_limits<uint64_t>::max()) return std::nullopt;
  return v;
}
std::optional<int64_t> amd_percent(uint32_t v) {
  if (v > 100) return std::nullopt;
  return static_cast<int64_t>(v);
}

// A zeroed buffer of kStructSlack bytes that the library writes a struct of type T into (amdsmi_api.h: the
// library's structs have grown between releases, a newer one must not write past the caller's memory).
template <typename T>
struct AmdStruct {
  static_assert(sizeof(T) <= amdsmi::kStructSlack);
  alignas(8) unsigned char bytes[amdsmi::kStructSlack] = {};
  T* get() { return reinterpret_cast<T*>(bytes); }
};

std::optional<std::string> amd_leading_string(AmdsmiCaller& c, const char* name,
                                              amdsmi::Status (*fn)(amdsmi::ProcessorHandle, void*),
                                              amdsmi::ProcessorHandle h) {
  auto buf = std::make_unique<AmdStruct<char[amdsmi::kStringLength]>>();
  if (!c.call(name, fn, h, static_cast<void*>(buf->bytes))) return std::nullopt;
  std::string s(reinterpret_cast<const char*>(buf->bytes),
                strnlen(reinterpret_cast<const char*>(buf->bytes), amdsmi::kStringLength));
  if (s.empty()) return std::nullopt;
  return s;
}

std::optional<std::string> amd_partition(AmdsmiCaller& c, const char* name,
                                         amdsmi::Status (*fn)(amdsmi::ProcessorHandle, char*, uint32_t),
                                         amdsmi::ProcessorHandle h) {
  char buf[amdsmi::kStringLength] = {};
  if (!c.call(name, fn, h, buf, static_cast<uint32_t>(sizeof(buf) - 1))) return std::nullopt;
  std::string s(buf, strnlen(buf, sizeof(buf)));
  if (s.empty()) return std::nullopt;
  return s;
}

// UUID, bus address, marketing name, partition modes: what does not change while the driver is loaded.
void amd_static_info(AmdsmiCaller& c, const amdsmi::Api& a, amdsmi::ProcessorHandle h, GpuSample& out) {
  char uuid[amdsmi::kUuidSize + 2] = {};
  unsigned len = amdsmi::kUuidSize;
  if (c.call("amdsmi_get_gpu_device_uuid", a.GetGpuDeviceUuid, h, &len, uuid))
    out.uuid = std::string(uuid, strnlen(uuid, amdsmi::kUuidSize));
  uint64_t bdf = 0;
  if (c.call("amdsmi_get_gpu_device_bdf", a.GetGpuDeviceBdf, h, &bdf))
    // The sysfs spelling (0000:0c:00.0): the one the kernel log and ROCR use.
    out.pci_bus_id = fmt::format("{:04x}:{:02x}:{:02x}.{:x}", amdsmi::bdf_domain(bdf), amdsmi::bdf_bus(bdf),
                                 amdsmi::bdf_device(bdf), amdsmi::bdf_function(bdf));
  out.name = amd_leading_string(c, "amdsmi_get_gpu_asic_info", a.GetGpuAsicInfo, h);
  out.compute_partition = amd_partition(c, "amdsmi_get_gpu_compute_partition", a.GetGpuComputePartition, h);
  out.memory_partition = amd_partition(c, "amdsmi_get_gpu_memory_partition", a.GetGpuMemoryPartition, h);
}

// Activity, VRAM, temperature, power: the reference's DeviceMetrics where AMD has them (no retired-page counts:
// AMD's bad pages are their own fields).
void amd_device_metrics(AmdsmiCaller& c, const amdsmi::Api& a, amdsmi::ProcessorHandle h, GpuSample& out) {
  AmdStruct<amdsmi::EngineUsage> use;
  if (c.call("amdsmi_get_gpu_activity", a.GetGpuActivity, h, use.get())) {
    out.gpu_util = amd_percent(use.get()->gfx_activity);
    out.mem_util = amd_percent(use.get()->umc_activity);
  }
  uint64_t total = 0, used = 0;
  if (c.call("amdsmi_get_gpu_memory_total", a.GetGpuMemoryTotal, h, amdsmi::kMemVram, &total))
    out.memory_total_bytes = total;
  if (c.call("amdsmi_get_gpu_memory_usage", a.GetGpuMemoryUsage, h, amdsmi::kMemVram, &used))
    out.memory_used_bytes = used;
  if (out.memory_total_bytes && out.memory_used_bytes && total > 0)
    out.mem_used_percent = static_cast<int64_t>(static_cast<double>(used) / static_cast<double>(total) * 100);
  // The hotspot (junction) sensor, as GCM's rocm_monitor reads it; the edge sensor where there is none (MI300 has
  // no edge sensor, older GPUs no hotspot).
  for (int sensor : {amdsmi::kTemperatureHotspot, amdsmi::kTemperatureEdge}) {
    int64_t t = 0;
    if (c.call("amdsmi_get_temp_metric", a.GetTempMetric, h, sensor, amdsmi::kTempCurrent, &t)) {
      out.temperature = t;
      break;
    }
  }
  AmdStruct<amdsmi::PowerInfo> pw;
  if (c.call("amdsmi_get_power_info", a.GetPowerInfo, h, pw.get())) {
    // Watts. MI300 and later report the current socket power, earlier GPUs the average; 0 is "not reported".
    auto watts = [](uint32_t w) -> std::optional<int64_t> {
      auto v = amd_u32(w);
      if (!v || *v == 0) return std::nullopt;
      return *v * 1000;
    };
    out.power_draw_mw = watts(pw.get()->current_socket_power);
    if (!out.power_draw_mw) out.power_draw_mw = watts(pw.get()->average_socket_power);
    out.power_limit_mw = watts(pw.get()->power_limit);
  }
  if (out.power_draw_mw && out.power_limit_mw)
    out.power_used_percent =
        static_cast<int64_t>(static_cast<double>(*out.power_draw_mw) / static_cast<double>(*out.power_limit_mw) * 100);
}

void amd_processes(AmdsmiCaller& c, const amdsmi::Api& a, amdsmi::ProcessorHandle h, GpuSample& out) {
  // The list is an array of the library's amdsmi_proc_info_t, so its stride must be ours (declared as of ROCm 6.4);
  // a list too small answers OUT_OF_RESOURCES with the count needed.
  uint32_t n = 32;
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<amdsmi::ProcInfo> list(n + 8);
    uint32_t max = static_cast<uint32_t>(list.size());
    amdsmi::Status rc = c.call_raw("amdsmi_get_gpu_process_list", a.GetGpuProcessList, h, &max, list.data());
    if (rc == amdsmi::STATUS_SUCCESS) {
      out.processes.emplace();
      for (uint32_t i = 0; i < max && i < list.size(); ++i) {
        GpuProcess p;
        p.pid = list[i].pid;
        p.used_memory_bytes = list[i].memory_usage.vram_mem;
        out.processes->push_back(p);
      }
      return;
    }
    if (rc != amdsmi::STATUS_OUT_OF_RESOURCES && rc != amdsmi::STATUS_INSUFFICIENT_SIZE) {
      c.check("amdsmi_get_gpu_process_list", rc);
      return;
    }
    n = max > n ? max : n * 2;
  }
  c.check("amdsmi_get_gpu_process_list", amdsmi::STATUS_OUT_OF_RESOURCES);
}

void amd_clocks_and_pcie(AmdsmiCaller& c, const amdsmi::Api& a, amdsmi::ProcessorHandle h, GpuSample& out) {
  uint64_t acc = 0, ts = 0;
  float resolution_uj = 0;
  if (c.call("amdsmi_get_energy_count", a.GetEnergyCount, h, &acc, &resolution_uj, &ts) && resolution_uj > 0)
    out.energy_mj = static_cast<uint64_t>(static_cast<double>(acc) * resolution_uj / 1000.0);
  AmdStruct<amdsmi::ClkInfo> gfx, mem;
  if (c.call("amdsmi_get_clock_info", a.GetClockInfo, h, amdsmi::kClkGfx, gfx.get())) {
    out.clock_graphics_mhz = amd_u32(gfx.get()->clk);
    out.max_clock_graphics_mhz = amd_u32(gfx.get()->max_clk);
  }
  if (c.call("amdsmi_get_clock_info", a.GetClockInfo, h, amdsmi::kClkMem, mem.get())) {
    out.clock_mem_mhz = amd_u32(mem.get()->clk);
    out.max_clock_mem_mhz = amd_u32(mem.get()->max_clk);
  }
  AmdStruct<amdsmi::ViolationStatus> vio;
  if (c.call("amdsmi_get_violation_status", a.GetViolationStatus, h, vio.get()))
    out.clock_event_reasons = amd_violation_reasons(*vio.get());
  AmdStruct<amdsmi::PcieInfo> pcie;
  if (c.call("amdsmi_get_pcie_info", a.GetPcieInfo, h, pcie.get())) {
    const auto& st = pcie.get()->pcie_static;
    const auto& m = pcie.get()->pcie_metric;
    if (m.pcie_width != 0 && m.pcie_width != std::numeric_limits<uint16_t>::max()) out.pcie_link_width = m.pcie_width;
    if (st.max_pcie_width != 0 && st.max_pcie_width != std::numeric_limits<uint16_t>::max())
      out.pcie_link_width_max = st.max_pcie_width;
    if (amd_u32(m.pcie_speed)) out.pcie_link_gen = pcie_generation_of_speed(m.pcie_speed);
    if (amd_u32(st.pcie_interface_version) && st.pcie_interface_version > 0)
      out.pcie_link_gen_max = st.pcie_interface_version;
    else if (amd_u32(st.max_pcie_speed))
      out.pcie_link_gen_max = pcie_generation_of_speed(st.max_pcie_speed);
    if (auto r = amd_u64(m.pcie_replay_count)) out.pcie_replay_count = static_cast<int64_t>(*r);
  }
}

// ECC totals since the driver loaded (volatile, as NVML's), deferred errors, bad pages, XGMI.
void amd_memory_and_link_errors(AmdsmiCaller& c, const amdsmi::Api& a, amdsmi::ProcessorHandle h, GpuSample& out) {
  AmdStruct<amdsmi::ErrorCount> ecc;
  if (c.call("amdsmi_get_gpu_total_ecc_count", a.GetGpuTotalEccCount, h, ecc.get())) {
    out.ecc_volatile_corrected = amd_u64(ecc.get()->correctable_count);
    out.ecc_volatile_uncorrected = amd_u64(ecc.get()->uncorrectable_count);
    out.ecc_deferred = amd_u64(ecc.get()->deferred_count);
  }
  uint32_t pages = 0;
  if (c.call("amdsmi_get_gpu_bad_page_info", a.GetGpuBadPageInfo, h, &pages,
             static_cast<amdsmi::RetiredPageRecord*>(nullptr))) {
    out.bad_pages = pages;
    if (pages == 0) {
      out.bad_pages_pending = 0;
    } else {
      std::vector<amdsmi::RetiredPageRecord> records(pages);
      uint32_t n = pages;
      if (c.call("amdsmi_get_gpu_bad_page_info", a.GetGpuBadPageInfo, h, &n, records.data())) {
        int64_t retired = 0, pending = 0;
        for (uint32_t i = 0; i < n && i < records.size(); ++i) (records[i].status == 1 ? pending : retired)++;
        out.bad_pages = retired;  // reserved, or failed to reserve: either way the page is bad
        out.bad_pages_pending = pending;
      }
    }
  }
  uint32_t xgmi = 0;
  if (c.call("amdsmi_gpu_xgmi_error_status", a.GpuXgmiErrorStatus, h, &xgmi)) out.xgmi_error_status = xgmi;
}

}  // namespace

std::optional<int64_t> pcie_generation_of_speed(uint64_t mts) {
  static constexpr std::pair<uint64_t, int64_t> kGens[] = {{2500, 1},  {5000, 2},  {8000, 3},
                                                           {16000, 4}, {32000, 5}, {64000, 6}};
  for (auto [speed, gen] : kGens)
    if (mts == speed) return gen;
  return std::nullopt;
}

std::optional<uint64_t> amd_violation_reasons(const amdsmi::ViolationStatus& v) {
  struct Flag {
    uint8_t value;
    uint64_t bit;
  };
  const Flag flags[] = {{v.active_ppt_pwr, 0x4},
                        {v.active_socket_thrm, 0x20},
                        {v.active_hbm_thrm, 0x20},
                        {v.active_vr_thrm, 0x40},
                        {v.active_prochot_thrm, 0x8}};
  std::optional<uint64_t> mask;
  for (const auto& f : flags) {
    if (f.value == std::numeric_limits<uint8_t>::max()) continue;  // not supported on this GPU
    mask = mask.value_or(0) | (f.value ? f.bit : 0);
  }
  return mask;
}

void sample_amd_gpu(const AmdsmiLibrary& lib, amdsmi::ProcessorHandle h, CallWatch& watch, const SampleScope& scope,
                    GpuSample& out) {
  const amdsmi::Api& a = lib.api();
  AmdsmiCaller c(lib, watch, out);
  if (scope.static_info) amd_static_info(c, a, h, out);
  amd_device_metrics(c, a, h, out);
  amd_processes(c, a, h, out);
  if (!scope.extended) return;
  amd_clocks_and_pcie(c, a, h, out);
  amd_memory_and_link_errors(c, a, h, out);
}

}  // namespace gcm
