// A fake libamd_smi.so driven by a JSON scenario ($GCM_FAKE_AMDSMI_SCENARIO), on the fake NVML's scenario model
// (tests/fake_nvml/fake_scenario.h: constants, series, schedules, jitter, per-function "errors" and "delays" with
// hangs, a shared epoch and time scale through GCM_FAKE_AMDSMI_EPOCH / _TIME_SCALE). One socket per GPU, one GPU
// processor per socket, as an MI300X node in SPX mode enumerates. The keys of a device:
//   name (market name), uuid, bdf ("0000:0c:00.0"), compute_partition, memory_partition,
//   activity {gfx, umc, mm} (percent), memory {total, used} (VRAM bytes), temperature {edge, hotspot, vram} (C),
//   power {socket_power, current_socket_power, average_socket_power, power_limit} (W),
//   energy {accumulator, resolution_uj}, clocks {gfx|mem: {clk, min_clk, max_clk}} (MHz),
//   violation {acc_*, per_*, active_*: the amdsmi_violation_status_t fields},
//   ecc {correctable, uncorrectable, deferred}, bad_pages {retired, pending, unreservable} (counts),
//   xgmi_error_status (0 none, 1 one, 2 several), pcie {width, max_width, speed, max_speed (MT/s),
//   interface_version, bandwidth, replay_count, l0_to_recovery_count, nak_sent_count, nak_received_count},
//   processes [{pid, name, mem, vram_mem}],
//   events [{type: VM_FAULT | THERMAL_THROTTLE | GPU_PRE_RESET | GPU_POST_RESET | RING_HANG | a number,
//            at_ms: after amdsmi_init_gpu_event_notification, message}].
// A whole object missing answers AMDSMI_STATUS_NOT_SUPPORTED; a field missing inside one reads as amdsmi's
// "not supported" sentinel (all bits set), as the real library fills the fields a GPU does not have.
// The global "driver_version" is every GPU's amdsmi_get_gpu_driver_info.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "fake_nvml/fake_scenario.h"
#include "gpu/amdsmi_api.h"

#define FAKE_AMDSMI_EXPORT extern "C" __attribute__((visibility("default")))

namespace am = gcm::amdsmi;
using am::Status;
using fake_nvml::Device;
using fake_nvml::Scenario;

namespace fake_nvml {
const Flavour kFlavour{"fake libamd_smi", "GCM_FAKE_AMDSMI", &gcm::amdsmi::status_from_name,
                       static_cast<int64_t>(gcm::amdsmi::STATUS_UNKNOWN_ERROR)};
}  // namespace fake_nvml

namespace {

std::mutex g_mutex;
std::atomic<int> g_refcount{0};
std::atomic<Scenario*> g_scenario{nullptr};

struct PendingEvent {
  uint32_t type = 0;
  int64_t at_ms = 0;
  std::string message;
  bool delivered = false;
};
struct EventState {  // one GPU's event notification, guarded by g_events_mutex
  bool registered = false;
  uint64_t mask = 0;
  std::chrono::steady_clock::time_point registered_at{};
  std::vector<PendingEvent> events;
};
std::mutex g_events_mutex;  // guards g_events and g_bad_pages
std::map<Device*, EventState> g_events;
std::map<Device*, std::array<uint32_t, 3>> g_bad_pages;  // the counts the last count query answered

// A socket handle and a processor handle both point at the device.
Device* dev(am::ProcessorHandle h) { return reinterpret_cast<Device*>(h); }

Status apply_fault(Device& d, const char* fn) {
  fake_nvml::Fault f = d.fault_for(fn);
  if (f.hang)
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // touches nothing: safe to abandon
  if (f.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(f.delay_ms));
  return static_cast<Status>(f.error);
}

bool known_device(Scenario* s, Device* d) {
  for (auto& x : s->devices)
    if (x.get() == d) return true;
  return false;
}

Status enter(am::ProcessorHandle h, const char* fn) {
  Scenario* s = g_scenario.load();
  if (g_refcount <= 0 || !s) return am::STATUS_NOT_INIT;
  if (!h || !known_device(s, dev(h))) return am::STATUS_INVAL;
  return apply_fault(*dev(h), fn);
}

#define ENTER(h, fn)                                         \
  do {                                                       \
    if (Status rc_ = enter((h), (fn)); rc_ != 0) return rc_; \
  } while (0)

Status wrong_type(const Device& d, const std::string& key, const char* expected, const nlohmann::json& v) {
  std::fprintf(stderr, "fake libamd_smi: scenario value %s.%s is %s, expected %s\n", fake_nvml::describe(d).c_str(),
               key.c_str(), v.type_name(), expected);
  return am::STATUS_UNKNOWN_ERROR;
}

bool has(const Device& d, const char* object) { return d.spec.contains(object) && !d.spec[object].is_null(); }

// The number at `key`, or all bits set of T when the scenario does not have it. False (with *rc) on a wrong type.
template <typename T>
bool field(Device& d, const std::string& key, T* out, Status* rc) {
  nlohmann::json v;
  if (!d.read(key, &v)) {
    *out = std::numeric_limits<T>::max();
    return true;
  }
  if (!v.is_number() && !v.is_boolean()) {
    *rc = wrong_type(d, key, "a number", v);
    return false;
  }
  *out = v.get<T>();
  return true;
}

// A required number: NOT_SUPPORTED when the scenario does not have it.
template <typename T>
Status value(Device& d, const std::string& key, T* out) {
  nlohmann::json v;
  if (!d.read(key, &v)) return am::STATUS_NOT_SUPPORTED;
  if (!v.is_number() && !v.is_boolean()) return wrong_type(d, key, "a number", v);
  *out = v.get<T>();
  return am::STATUS_SUCCESS;
}

Status string_value(Device& d, const std::string& key, char* buf, size_t len) {
  nlohmann::json v;
  if (!d.read(key, &v)) return am::STATUS_NOT_SUPPORTED;
  if (!v.is_string()) return wrong_type(d, key, "a string", v);
  std::string s = v.get<std::string>();
  if (s.size() + 1 > len) return am::STATUS_INSUFFICIENT_SIZE;
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return am::STATUS_SUCCESS;
}

#define FIELD(d, key, out)                           \
  do {                                               \
    Status rc_ = am::STATUS_SUCCESS;                 \
    if (!field((d), (key), (out), &rc_)) return rc_; \
  } while (0)

uint32_t event_type(const nlohmann::json& t) {
  if (t.is_number_unsigned()) return t.get<uint32_t>();
  if (!t.is_string()) return 0;
  static const std::map<std::string, uint32_t> kNames = {{"VM_FAULT", am::kEvtVmFault},
                                                         {"THERMAL_THROTTLE", am::kEvtThermalThrottle},
                                                         {"GPU_PRE_RESET", am::kEvtGpuPreReset},
                                                         {"GPU_POST_RESET", am::kEvtGpuPostReset},
                                                         {"RING_HANG", am::kEvtRingHang}};
  auto it = kNames.find(t.get<std::string>());
  return it == kNames.end() ? 0 : it->second;
}

// Checks the scenario's events when it is loaded (the calls that read them must not fail later).
bool load_events(Scenario* s) {
  std::lock_guard<std::mutex> lk(g_events_mutex);
  g_events.clear();
  for (auto& d : s->devices) {
    EventState& st = g_events[d.get()];
    if (!d->spec.contains("events")) continue;
    const auto& evs = d->spec["events"];
    if (!evs.is_array()) {
      std::fprintf(stderr, "fake libamd_smi: scenario %s.events must be an array\n", fake_nvml::describe(*d).c_str());
      return false;
    }
    for (size_t i = 0; i < evs.size(); ++i) {
      const auto& e = evs[i];
      uint32_t type = e.is_object() && e.contains("type") ? event_type(e["type"]) : 0;
      if (type == 0 || (e.contains("at_ms") && !e["at_ms"].is_number_integer()) ||
          (e.contains("message") && !e["message"].is_string())) {
        std::fprintf(stderr,
                     "fake libamd_smi: scenario %s.events[%zu] must be {\"type\": VM_FAULT, THERMAL_THROTTLE, "
                     "GPU_PRE_RESET, GPU_POST_RESET, RING_HANG or a number, \"at_ms\": integer, \"message\": "
                     "string}\n",
                     fake_nvml::describe(*d).c_str(), i);
        return false;
      }
      st.events.push_back({type, e.value("at_ms", int64_t{0}), e.value("message", std::string()), false});
    }
  }
  return true;
}

}  // namespace

FAKE_AMDSMI_EXPORT Status amdsmi_init(uint64_t flags) {
  if (!(flags & am::kInitAmdGpus)) return am::STATUS_SUCCESS;  // CPUs only: nothing of this fake is wanted
  Scenario* s = nullptr;
  {
    std::lock_guard<std::mutex> lk(g_mutex);
    if (g_refcount > 0) {
      ++g_refcount;
      return am::STATUS_SUCCESS;
    }
    s = fake_nvml::load_scenario();
    if (!s) return am::STATUS_DRIVER_NOT_LOADED;
    if (!load_events(s)) return am::STATUS_INIT_ERROR;
  }
  if (Status rc = apply_fault(s->global, "amdsmi_init")) return rc;
  std::lock_guard<std::mutex> lk(g_mutex);
  if (g_refcount == 0) g_scenario.store(s);
  ++g_refcount;
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_shut_down() {
  std::lock_guard<std::mutex> lk(g_mutex);
  if (g_refcount == 0) return am::STATUS_NOT_INIT;
  --g_refcount;
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_status_code_to_string(Status s, const char** out) {
  if (!out) return am::STATUS_INVAL;
  switch (s) {
    case am::STATUS_SUCCESS:
      *out = "Success";
      break;
    case am::STATUS_NOT_SUPPORTED:
      *out = "Feature not supported";
      break;
    case am::STATUS_NOT_INIT:
      *out = "Device not initialized";
      break;
    case am::STATUS_DRIVER_NOT_LOADED:
      *out = "Driver not loaded";
      break;
    case am::STATUS_BUSY:
      *out = "Device busy";
      break;
    default: {
      const char* name = am::status_name(s);
      *out = name ? name : "Unknown error";
    }
  }
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_socket_handles(uint32_t* count, am::SocketHandle* handles) {
  Scenario* s = g_scenario.load();
  if (g_refcount <= 0 || !s) return am::STATUS_NOT_INIT;
  if (!count) return am::STATUS_INVAL;
  if (Status rc = apply_fault(s->global, "amdsmi_get_socket_handles")) return rc;
  uint32_t n = static_cast<uint32_t>(s->devices.size());
  if (!handles) {
    *count = n;
    return am::STATUS_SUCCESS;
  }
  uint32_t k = std::min(*count, n);
  for (uint32_t i = 0; i < k; ++i) handles[i] = reinterpret_cast<am::SocketHandle>(s->devices[i].get());
  *count = k;
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_processor_handles(am::SocketHandle socket, uint32_t* count,
                                                       am::ProcessorHandle* handles) {
  auto h = reinterpret_cast<am::ProcessorHandle>(socket);
  ENTER(h, "amdsmi_get_processor_handles");
  if (!count) return am::STATUS_INVAL;
  if (!handles) {
    *count = 1;
    return am::STATUS_SUCCESS;
  }
  if (*count < 1) return am::STATUS_OUT_OF_RESOURCES;
  handles[0] = h;
  *count = 1;
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_gpu_device_uuid(am::ProcessorHandle h, unsigned* len, char* uuid) {
  ENTER(h, "amdsmi_get_gpu_device_uuid");
  if (!len || !uuid) return am::STATUS_INVAL;
  Status rc = string_value(*dev(h), "uuid", uuid, *len);
  if (rc == am::STATUS_SUCCESS) *len = static_cast<unsigned>(std::strlen(uuid));
  return rc;
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_gpu_device_bdf(am::ProcessorHandle h, uint64_t* bdf) {
  ENTER(h, "amdsmi_get_gpu_device_bdf");
  if (!bdf) return am::STATUS_INVAL;
  char text[64] = {};
  if (Status rc = string_value(*dev(h), "bdf", text, sizeof(text))) return rc;
  unsigned long long domain = 0;
  unsigned bus = 0, device = 0, function = 0;
  if (std::sscanf(text, "%llx:%x:%x.%x", &domain, &bus, &device, &function) != 4 || bus > 0xff || device > 0x1f ||
      function > 7) {
    std::fprintf(stderr, "fake libamd_smi: scenario value %s.bdf '%s' is not DDDD:BB:DD.F\n",
                 fake_nvml::describe(*dev(h)).c_str(), text);
    return am::STATUS_UNKNOWN_ERROR;
  }
  *bdf = (static_cast<uint64_t>(domain) << 16) | (bus << 8) | (device << 3) | function;
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_gpu_asic_info(am::ProcessorHandle h, void* info) {
  ENTER(h, "amdsmi_get_gpu_asic_info");
  if (!info) return am::STATUS_INVAL;
  return string_value(*dev(h), "name", static_cast<char*>(info), am::kStringLength);
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_gpu_driver_info(am::ProcessorHandle h, void* info) {
  ENTER(h, "amdsmi_get_gpu_driver_info");
  if (!info) return am::STATUS_INVAL;
  return string_value(g_scenario.load()->global, "driver_version", static_cast<char*>(info), am::kStringLength);
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_gpu_compute_partition(am::ProcessorHandle h, char* out, uint32_t len) {
  ENTER(h, "amdsmi_get_gpu_compute_partition");
  if (!out) return am::STATUS_INVAL;
  return string_value(*dev(h), "compute_partition", out, len);
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_gpu_memory_partition(am::ProcessorHandle h, char* out, uint32_t len) {
  ENTER(h, "amdsmi_get_gpu_memory_partition");
  if (!out) return am::STATUS_INVAL;
  return string_value(*dev(h), "memory_partition", out, len);
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_gpu_activity(am::ProcessorHandle h, am::EngineUsage* u) {
  ENTER(h, "amdsmi_get_gpu_activity");
  if (!u) return am::STATUS_INVAL;
  Device& d = *dev(h);
  if (!has(d, "activity")) return am::STATUS_NOT_SUPPORTED;
  FIELD(d, "activity.gfx", &u->gfx_activity);
  FIELD(d, "activity.umc", &u->umc_activity);
  FIELD(d, "activity.mm", &u->mm_activity);
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_gpu_memory_total(am::ProcessorHandle h, int type, uint64_t* total) {
  ENTER(h, "amdsmi_get_gpu_memory_total");
  if (!total) return am::STATUS_INVAL;
  if (type != am::kMemVram) return am::STATUS_NOT_SUPPORTED;
  return value(*dev(h), "memory.total", total);
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_gpu_memory_usage(am::ProcessorHandle h, int type, uint64_t* used) {
  ENTER(h, "amdsmi_get_gpu_memory_usage");
  if (!used) return am::STATUS_INVAL;
  if (type != am::kMemVram) return am::STATUS_NOT_SUPPORTED;
  return value(*dev(h), "memory.used", used);
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_temp_metric(am::ProcessorHandle h, int sensor, int metric, int64_t* v) {
  ENTER(h, "amdsmi_get_temp_metric");
  if (!v) return am::STATUS_INVAL;
  if (metric != am::kTempCurrent) return am::STATUS_NOT_SUPPORTED;
  const char* name = sensor == am::kTemperatureEdge      ? "temperature.edge"
                     : sensor == am::kTemperatureHotspot ? "temperature.hotspot"
                     : sensor == am::kTemperatureVram    ? "temperature.vram"
                                                         : nullptr;
  if (!name) return am::STATUS_INVAL;
  return value(*dev(h), name, v);
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_power_info(am::ProcessorHandle h, am::PowerInfo* p) {
  ENTER(h, "amdsmi_get_power_info");
  if (!p) return am::STATUS_INVAL;
  Device& d = *dev(h);
  if (!has(d, "power")) return am::STATUS_NOT_SUPPORTED;
  FIELD(d, "power.socket_power", &p->socket_power);
  FIELD(d, "power.current_socket_power", &p->current_socket_power);
  FIELD(d, "power.average_socket_power", &p->average_socket_power);
  FIELD(d, "power.power_limit", &p->power_limit);
  p->gfx_voltage = p->soc_voltage = p->mem_voltage = std::numeric_limits<uint64_t>::max();
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_energy_count(am::ProcessorHandle h, uint64_t* acc, float* resolution,
                                                  uint64_t* timestamp) {
  ENTER(h, "amdsmi_get_energy_count");
  if (!acc || !resolution || !timestamp) return am::STATUS_INVAL;
  Device& d = *dev(h);
  if (Status rc = value(d, "energy.accumulator", acc)) return rc;
  double res = 15.3;  // µJ per count, MI300X's
  if (Status rc = value(d, "energy.resolution_uj", &res); rc != am::STATUS_SUCCESS && rc != am::STATUS_NOT_SUPPORTED)
    return rc;
  *resolution = static_cast<float>(res);
  *timestamp = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_clock_info(am::ProcessorHandle h, int type, am::ClkInfo* c) {
  ENTER(h, "amdsmi_get_clock_info");
  if (!c) return am::STATUS_INVAL;
  const char* name = type == am::kClkGfx ? "gfx" : type == am::kClkMem ? "mem" : nullptr;
  Device& d = *dev(h);
  if (!name || !d.spec.contains("clocks") || !d.spec["clocks"].contains(name)) return am::STATUS_NOT_SUPPORTED;
  std::string k = std::string("clocks.") + name;
  FIELD(d, k + ".clk", &c->clk);
  FIELD(d, k + ".min_clk", &c->min_clk);
  FIELD(d, k + ".max_clk", &c->max_clk);
  c->clk_locked = 0;
  c->clk_deep_sleep = 0;
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_violation_status(am::ProcessorHandle h, am::ViolationStatus* v) {
  ENTER(h, "amdsmi_get_violation_status");
  if (!v) return am::STATUS_INVAL;
  Device& d = *dev(h);
  if (!has(d, "violation")) return am::STATUS_NOT_SUPPORTED;
  // The fields in declaration order (amdsmi_api.h), by their amdsmi names.
  struct U64 {
    const char* name;
    uint64_t* slot;
  } u64s[] = {{"reference_timestamp", &v->reference_timestamp},
              {"violation_timestamp", &v->violation_timestamp},
              {"acc_counter", &v->acc_counter},
              {"acc_prochot_thrm", &v->acc_prochot_thrm},
              {"acc_ppt_pwr", &v->acc_ppt_pwr},
              {"acc_socket_thrm", &v->acc_socket_thrm},
              {"acc_vr_thrm", &v->acc_vr_thrm},
              {"acc_hbm_thrm", &v->acc_hbm_thrm},
              {"acc_gfx_clk_below_host_limit", &v->acc_gfx_clk_below_host_limit},
              {"per_prochot_thrm", &v->per_prochot_thrm},
              {"per_ppt_pwr", &v->per_ppt_pwr},
              {"per_socket_thrm", &v->per_socket_thrm},
              {"per_vr_thrm", &v->per_vr_thrm},
              {"per_hbm_thrm", &v->per_hbm_thrm},
              {"per_gfx_clk_below_host_limit", &v->per_gfx_clk_below_host_limit}};
  for (auto& f : u64s) FIELD(d, std::string("violation.") + f.name, f.slot);
  struct U8 {
    const char* name;
    uint8_t* slot;
  } u8s[] = {{"active_prochot_thrm", &v->active_prochot_thrm},
             {"active_ppt_pwr", &v->active_ppt_pwr},
             {"active_socket_thrm", &v->active_socket_thrm},
             {"active_vr_thrm", &v->active_vr_thrm},
             {"active_hbm_thrm", &v->active_hbm_thrm},
             {"active_gfx_clk_below_host_limit", &v->active_gfx_clk_below_host_limit}};
  for (auto& f : u8s) FIELD(d, std::string("violation.") + f.name, f.slot);
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_gpu_total_ecc_count(am::ProcessorHandle h, am::ErrorCount* e) {
  ENTER(h, "amdsmi_get_gpu_total_ecc_count");
  if (!e) return am::STATUS_INVAL;
  Device& d = *dev(h);
  if (!has(d, "ecc")) return am::STATUS_NOT_SUPPORTED;
  FIELD(d, "ecc.correctable", &e->correctable_count);
  FIELD(d, "ecc.uncorrectable", &e->uncorrectable_count);
  FIELD(d, "ecc.deferred", &e->deferred_count);
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_gpu_bad_page_info(am::ProcessorHandle h, uint32_t* num, am::RetiredPageRecord* r) {
  ENTER(h, "amdsmi_get_gpu_bad_page_info");
  if (!num) return am::STATUS_INVAL;
  Device& d = *dev(h);
  if (!has(d, "bad_pages")) return am::STATUS_NOT_SUPPORTED;
  // The count query reads the counts (one read of each series); the fetch that follows lists those same pages.
  std::array<uint32_t, 3> counts{};  // retired, pending, unreservable
  if (!r) {
    const char* keys[3] = {"bad_pages.retired", "bad_pages.pending", "bad_pages.unreservable"};
    for (int i = 0; i < 3; ++i) {
      Status rc = value(d, keys[i], &counts[i]);
      if (rc == am::STATUS_NOT_SUPPORTED)
        counts[i] = 0;
      else if (rc)
        return rc;
    }
    std::lock_guard<std::mutex> lk(g_events_mutex);
    g_bad_pages[&d] = counts;
    *num = counts[0] + counts[1] + counts[2];
    return am::STATUS_SUCCESS;
  }
  {
    std::lock_guard<std::mutex> lk(g_events_mutex);
    counts = g_bad_pages[&d];
  }
  uint32_t k = 0;
  for (uint32_t status = 0; status < 3; ++status)
    for (uint32_t i = 0; i < counts[status] && k < *num; ++i, ++k) r[k] = {0x1000000ULL * (k + 1), 4096, status};
  *num = k;
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_gpu_xgmi_error_status(am::ProcessorHandle h, uint32_t* status) {
  ENTER(h, "amdsmi_gpu_xgmi_error_status");
  if (!status) return am::STATUS_INVAL;
  return value(*dev(h), "xgmi_error_status", status);
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_pcie_info(am::ProcessorHandle h, am::PcieInfo* p) {
  ENTER(h, "amdsmi_get_pcie_info");
  if (!p) return am::STATUS_INVAL;
  Device& d = *dev(h);
  if (!has(d, "pcie")) return am::STATUS_NOT_SUPPORTED;
  FIELD(d, "pcie.max_width", &p->pcie_static.max_pcie_width);
  FIELD(d, "pcie.max_speed", &p->pcie_static.max_pcie_speed);
  FIELD(d, "pcie.interface_version", &p->pcie_static.pcie_interface_version);
  p->pcie_static.slot_type = 0;
  FIELD(d, "pcie.width", &p->pcie_metric.pcie_width);
  FIELD(d, "pcie.speed", &p->pcie_metric.pcie_speed);
  FIELD(d, "pcie.bandwidth", &p->pcie_metric.pcie_bandwidth);
  FIELD(d, "pcie.replay_count", &p->pcie_metric.pcie_replay_count);
  FIELD(d, "pcie.l0_to_recovery_count", &p->pcie_metric.pcie_l0_to_recovery_count);
  FIELD(d, "pcie.replay_roll_over_count", &p->pcie_metric.pcie_replay_roll_over_count);
  FIELD(d, "pcie.nak_sent_count", &p->pcie_metric.pcie_nak_sent_count);
  FIELD(d, "pcie.nak_received_count", &p->pcie_metric.pcie_nak_received_count);
  FIELD(d, "pcie.other_end_recovery_count", &p->pcie_metric.pcie_lc_perf_other_end_recovery_count);
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_get_gpu_process_list(am::ProcessorHandle h, uint32_t* max, am::ProcInfo* list) {
  ENTER(h, "amdsmi_get_gpu_process_list");
  if (!max) return am::STATUS_INVAL;
  Device& d = *dev(h);
  if (!d.spec.contains("processes")) {
    *max = 0;
    return am::STATUS_SUCCESS;
  }
  const auto& procs = d.spec["processes"];
  if (!procs.is_array()) return wrong_type(d, "processes", "an array", procs);
  uint32_t n = static_cast<uint32_t>(procs.size());
  if (!list || *max < n) {
    *max = n;
    return list ? am::STATUS_OUT_OF_RESOURCES : am::STATUS_SUCCESS;
  }
  for (uint32_t i = 0; i < n; ++i) {
    const auto& p = procs[i];
    std::string where = "processes." + std::to_string(i);
    am::ProcInfo info{};
    uint32_t pid = 0;
    if (Status rc = value(d, where + ".pid", &pid)) return rc;
    info.pid = pid;
    std::string name = p.value("name", std::string("python"));
    std::snprintf(info.name, sizeof(info.name), "%s", name.c_str());
    uint64_t vram = 0;
    if (value(d, where + ".vram_mem", &vram) == am::STATUS_SUCCESS) info.memory_usage.vram_mem = vram;
    if (value(d, where + ".mem", &info.mem) != am::STATUS_SUCCESS) info.mem = vram;
    list[i] = info;
  }
  *max = n;
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_init_gpu_event_notification(am::ProcessorHandle h) {
  ENTER(h, "amdsmi_init_gpu_event_notification");
  std::lock_guard<std::mutex> lk(g_events_mutex);
  EventState& st = g_events[dev(h)];
  st.registered = true;
  st.registered_at = std::chrono::steady_clock::now();
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_set_gpu_event_notification_mask(am::ProcessorHandle h, uint64_t mask) {
  ENTER(h, "amdsmi_set_gpu_event_notification_mask");
  std::lock_guard<std::mutex> lk(g_events_mutex);
  EventState& st = g_events[dev(h)];
  if (!st.registered) return am::STATUS_NOT_INIT;
  st.mask = mask;
  return am::STATUS_SUCCESS;
}

FAKE_AMDSMI_EXPORT Status amdsmi_stop_gpu_event_notification(am::ProcessorHandle h) {
  ENTER(h, "amdsmi_stop_gpu_event_notification");
  std::lock_guard<std::mutex> lk(g_events_mutex);
  g_events[dev(h)].registered = false;
  return am::STATUS_SUCCESS;
}

// Delivers every event whose time (at_ms after its GPU's registration) has come and whose type the GPU's mask
// has, up to *num; waits at most timeout_ms for the first. NO_DATA when none came.
FAKE_AMDSMI_EXPORT Status amdsmi_get_gpu_event_notification(int timeout_ms, uint32_t* num,
                                                            am::EventNotification* data) {
  Scenario* s = g_scenario.load();
  if (g_refcount <= 0 || !s) return am::STATUS_NOT_INIT;
  if (!num || !data || *num == 0) return am::STATUS_INVAL;
  if (Status rc = apply_fault(s->global, "amdsmi_get_gpu_event_notification")) return rc;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    auto next = deadline;  // sleep until the next event is due, not in small steps
    uint32_t k = 0;
    {
      std::lock_guard<std::mutex> lk(g_events_mutex);
      for (auto& [d, st] : g_events) {
        if (!st.registered) continue;
        for (auto& e : st.events) {
          if (e.delivered || !(st.mask & am::event_mask_bit(e.type))) continue;
          auto due = st.registered_at + std::chrono::milliseconds(e.at_ms);
          if (now < due) {
            next = std::min(next, due);
            continue;
          }
          if (k >= *num) break;
          e.delivered = true;
          data[k].processor_handle = reinterpret_cast<am::ProcessorHandle>(d);
          data[k].event = e.type;
          std::snprintf(data[k].message, sizeof(data[k].message), "%s", e.message.c_str());
          ++k;
        }
      }
    }
    if (k > 0) {
      *num = k;
      return am::STATUS_SUCCESS;
    }
    if (now >= deadline) {
      *num = 0;
      return am::STATUS_NO_DATA;
    }
    std::this_thread::sleep_until(next);
  }
}
