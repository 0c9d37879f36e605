// The exported NVML entry points of the fake library. Each one checks initialisation and its handle, applies the
// scenario's fault for that function (error, delay, hang), then answers from the scenario like the real library:
// the same return codes for unsupported values, small buffers and unknown handles.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "fake_scenario.h"
#include "gpu/nvml_api.h"

#define FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))

namespace nv = gcm::nvml;
using fake_nvml::Device;
using fake_nvml::Scenario;
using nv::Return;

namespace fake_nvml {
const Flavour kFlavour{"fake libnvidia-ml", "GCM_FAKE_NVML",
                       [](const char* name) -> int64_t { return nv::return_code_from_name(name); }, nv::ERROR_UNKNOWN};
}  // namespace fake_nvml

namespace {

std::mutex g_mutex;
std::atomic<int> g_refcount{0};  // nvmlInit/nvmlShutdown nest, as in the real library; read without the lock
std::atomic<Scenario*> g_scenario{nullptr};

Device* dev(nv::Device h) { return reinterpret_cast<Device*>(h); }
nv::Device handle(Device* d) { return reinterpret_cast<nv::Device>(d); }

Return apply_fault(Device& d, const char* fn) {
  fake_nvml::Fault f = d.fault_for(fn);
  if (f.hang)
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));  // touches nothing: safe to abandon
  if (f.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(f.delay_ms));
  return static_cast<Return>(f.error);
}

// Common prologue of device functions.
Return enter(nv::Device h, const char* fn) {
  if (g_refcount <= 0 || !g_scenario.load()) return nv::ERROR_UNINITIALIZED;
  if (!h) return nv::ERROR_INVALID_ARGUMENT;
  return apply_fault(*dev(h), fn);
}

// A scenario value of the wrong type is a mistake in the test's scenario: said on stderr, naming the value's place
// and the type wanted, and answered with NVML_ERROR_UNKNOWN. (nlohmann's type_error escaping an extern "C"
// function would abort the process without a word.)
Return wrong_type(const Device& d, const std::string& key, const char* expected, const nlohmann::json& v) {
  std::fprintf(stderr, "fake libnvidia-ml: scenario value %s.%s is %s, expected %s\n", fake_nvml::describe(d).c_str(),
               key.c_str(), v.type_name(), expected);
  return nv::ERROR_UNKNOWN;
}

template <typename T>
Return read_uint(Device& d, const std::string& key, T* out) {
  nlohmann::json v;
  if (!d.read(key, &v)) return nv::ERROR_NOT_SUPPORTED;
  if (!v.is_number() && !v.is_boolean()) return wrong_type(d, key, "a number", v);
  *out = v.get<T>();
  return nv::SUCCESS;
}

// Whether the scenario has `key` for this device (without reading it, so no series advances).
bool lookup_has(Device& d, const std::string& key) {
  const nlohmann::json* cur = &d.spec;
  size_t i = 0;
  while (i <= key.size()) {
    size_t j = key.find('.', i);
    if (j == std::string::npos) j = key.size();
    std::string part = key.substr(i, j - i);
    if (!cur->is_object()) return false;
    auto it = cur->find(part);
    if (it == cur->end()) return false;
    cur = &*it;
    i = j + 1;
  }
  return !cur->is_null();
}

Return read_string(Device& d, const std::string& key, char* buf, unsigned len) {
  nlohmann::json v;
  if (!buf) return nv::ERROR_INVALID_ARGUMENT;
  if (!d.read(key, &v)) return nv::ERROR_NOT_SUPPORTED;
  if (!v.is_string()) return wrong_type(d, key, "a string", v);
  std::string s = v.get<std::string>();
  if (s.size() + 1 > len) return nv::ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return nv::SUCCESS;
}

const char* clock_name(unsigned type) {
  switch (type) {
    case nv::CLOCK_GRAPHICS:
      return "graphics";
    case nv::CLOCK_SM:
      return "sm";
    case nv::CLOCK_MEM:
      return "mem";
    case nv::CLOCK_VIDEO:
      return "video";
  }
  return nullptr;
}

#define ENTER(h, fn)                                         \
  do {                                                       \
    if (Return rc_ = enter((h), (fn)); rc_ != 0) return rc_; \
  } while (0)

}  // namespace

FAKE_NVML_EXPORT Return nvmlInit_v2() {
  Scenario* s = nullptr;
  {
    std::lock_guard<std::mutex> lk(g_mutex);
    if (g_refcount > 0) {
      ++g_refcount;
      return nv::SUCCESS;
    }
    // Reread at every first init: tests switch scenarios. First inits that overlap (checks on threads of one
    // process) each load it and apply its init faults; the first to finish is the one every caller then uses.
    // Sharing one loaded scenario between them instead would also hand a scenario whose init hung for good to
    // every later test in the process.
    s = fake_nvml::load_scenario();
    if (!s) return nv::ERROR_DRIVER_NOT_LOADED;
  }
  // A slow or hung init holds no lock, so an abandoned one does not wedge later tests in the same process.
  if (Return rc = apply_fault(s->global, "nvmlInit_v2")) return rc;
  std::lock_guard<std::mutex> lk(g_mutex);
  if (g_refcount == 0) g_scenario.store(s);
  ++g_refcount;
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlShutdown() {
  std::lock_guard<std::mutex> lk(g_mutex);
  if (g_refcount == 0) return nv::ERROR_UNINITIALIZED;
  --g_refcount;
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT const char* nvmlErrorString(Return r) {
  switch (r) {
    case nv::SUCCESS:
      return "Success";
    case nv::ERROR_UNINITIALIZED:
      return "Uninitialized";
    case nv::ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case nv::ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case nv::ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case nv::ERROR_NOT_FOUND:
      return "Not Found";
    case nv::ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case nv::ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case nv::ERROR_TIMEOUT:
      return "Timeout";
    case nv::ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case nv::ERROR_UNKNOWN:
      return "Unknown Error";
    default:
      return "Unknown Error";
  }
}

FAKE_NVML_EXPORT Return nvmlSystemGetDriverVersion(char* buf, unsigned len) {
  Scenario* s = g_scenario.load();
  if (g_refcount <= 0 || !s) return nv::ERROR_UNINITIALIZED;
  return read_string(s->global, "driver_version", buf, len);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetCount_v2(unsigned* count) {
  Scenario* s = g_scenario.load();
  if (g_refcount <= 0 || !s) return nv::ERROR_UNINITIALIZED;
  if (!count) return nv::ERROR_INVALID_ARGUMENT;
  if (Return rc = apply_fault(s->global, "nvmlDeviceGetCount_v2")) return rc;
  *count = static_cast<unsigned>(s->devices.size());
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetHandleByIndex_v2(unsigned index, nv::Device* out) {
  Scenario* s = g_scenario.load();
  if (g_refcount <= 0 || !s) return nv::ERROR_UNINITIALIZED;
  if (!out || index >= s->devices.size()) return nv::ERROR_INVALID_ARGUMENT;
  if (Return rc = apply_fault(*s->devices[index], "nvmlDeviceGetHandleByIndex_v2")) return rc;
  *out = handle(s->devices[index].get());
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetName(nv::Device h, char* buf, unsigned len) {
  ENTER(h, "nvmlDeviceGetName");
  return read_string(*dev(h), "name", buf, len);
}
FAKE_NVML_EXPORT Return nvmlDeviceGetUUID(nv::Device h, char* buf, unsigned len) {
  ENTER(h, "nvmlDeviceGetUUID");
  return read_string(*dev(h), "uuid", buf, len);
}
FAKE_NVML_EXPORT Return nvmlDeviceGetSerial(nv::Device h, char* buf, unsigned len) {
  ENTER(h, "nvmlDeviceGetSerial");
  return read_string(*dev(h), "serial", buf, len);
}
FAKE_NVML_EXPORT Return nvmlDeviceGetVbiosVersion(nv::Device h, char* buf, unsigned len) {
  ENTER(h, "nvmlDeviceGetVbiosVersion");
  return read_string(*dev(h), "vbios_version", buf, len);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetPciInfo_v3(nv::Device h, nv::PciInfo* pci) {
  ENTER(h, "nvmlDeviceGetPciInfo_v3");
  if (!pci) return nv::ERROR_INVALID_ARGUMENT;
  nlohmann::json v;
  if (!dev(h)->read("pci_bus_id", &v)) return nv::ERROR_NOT_SUPPORTED;
  if (!v.is_string()) return wrong_type(*dev(h), "pci_bus_id", "a string", v);
  std::string id = v.get<std::string>();
  std::memset(pci, 0, sizeof(*pci));
  std::snprintf(pci->bus_id, sizeof(pci->bus_id), "%s", id.c_str());
  std::snprintf(pci->bus_id_legacy, sizeof(pci->bus_id_legacy), "%s", id.size() > 4 ? id.c_str() + 4 : id.c_str());
  unsigned dom = 0, bus = 0, device = 0;
  if (std::sscanf(id.c_str(), "%x:%x:%x", &dom, &bus, &device) == 3) {
    pci->domain = dom;
    pci->bus = bus;
    pci->device = device;
  }
  pci->pci_device_id = dev(h)->spec.value("pci_device_id", 0x233010deu);
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetMinorNumber(nv::Device h, unsigned* minor) {
  ENTER(h, "nvmlDeviceGetMinorNumber");
  if (!minor) return nv::ERROR_INVALID_ARGUMENT;
  if (read_uint(*dev(h), "minor_number", minor) != nv::SUCCESS) *minor = dev(h)->index;  // /dev/nvidia<index>
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetUtilizationRates(nv::Device h, nv::Utilization* u) {
  ENTER(h, "nvmlDeviceGetUtilizationRates");
  if (!u) return nv::ERROR_INVALID_ARGUMENT;
  if (Return rc = read_uint(*dev(h), "utilization.gpu", &u->gpu)) return rc;
  return read_uint(*dev(h), "utilization.memory", &u->memory);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetMemoryInfo(nv::Device h, nv::Memory* m) {
  ENTER(h, "nvmlDeviceGetMemoryInfo");
  if (!m) return nv::ERROR_INVALID_ARGUMENT;
  if (Return rc = read_uint(*dev(h), "memory.total", &m->total)) return rc;
  if (Return rc = read_uint(*dev(h), "memory.used", &m->used)) return rc;
  m->free = m->total > m->used ? m->total - m->used : 0;
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetTemperature(nv::Device h, unsigned sensor, unsigned* t) {
  ENTER(h, "nvmlDeviceGetTemperature");
  if (!t || sensor != nv::kTemperatureGpu) return nv::ERROR_INVALID_ARGUMENT;
  return read_uint(*dev(h), "temperature", t);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetPowerUsage(nv::Device h, unsigned* mw) {
  ENTER(h, "nvmlDeviceGetPowerUsage");
  return mw ? read_uint(*dev(h), "power_usage", mw) : nv::ERROR_INVALID_ARGUMENT;
}
FAKE_NVML_EXPORT Return nvmlDeviceGetEnforcedPowerLimit(nv::Device h, unsigned* mw) {
  ENTER(h, "nvmlDeviceGetEnforcedPowerLimit");
  return mw ? read_uint(*dev(h), "power_limit", mw) : nv::ERROR_INVALID_ARGUMENT;
}
FAKE_NVML_EXPORT Return nvmlDeviceGetTotalEnergyConsumption(nv::Device h, unsigned long long* mj) {
  ENTER(h, "nvmlDeviceGetTotalEnergyConsumption");
  return mj ? read_uint(*dev(h), "energy", mj) : nv::ERROR_INVALID_ARGUMENT;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetRetiredPages(nv::Device h, unsigned cause, unsigned* count,
                                                  unsigned long long* addresses) {
  ENTER(h, "nvmlDeviceGetRetiredPages");
  if (!count || cause > nv::RETIRED_DOUBLE_BIT) return nv::ERROR_INVALID_ARGUMENT;
  unsigned n = 0;
  if (Return rc =
          read_uint(*dev(h), cause == nv::RETIRED_DOUBLE_BIT ? "retired_pages.double" : "retired_pages.single", &n))
    return rc;
  if (*count < n || (n > 0 && !addresses)) {
    *count = n;
    return nv::ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < n; ++i) addresses[i] = 0x1000ull * (i + 1) + cause;
  *count = n;
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetRetiredPagesPendingStatus(nv::Device h, unsigned* pending) {
  ENTER(h, "nvmlDeviceGetRetiredPagesPendingStatus");
  return pending ? read_uint(*dev(h), "retired_pages.pending", pending) : nv::ERROR_INVALID_ARGUMENT;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetRemappedRows(nv::Device h, unsigned* corr, unsigned* unc, unsigned* pending,
                                                  unsigned* failure) {
  ENTER(h, "nvmlDeviceGetRemappedRows");
  if (!corr || !unc || !pending || !failure) return nv::ERROR_INVALID_ARGUMENT;
  Device& d = *dev(h);
  if (Return rc = read_uint(d, "remapped_rows.correctable", corr)) return rc;
  if (Return rc = read_uint(d, "remapped_rows.uncorrectable", unc)) return rc;
  if (Return rc = read_uint(d, "remapped_rows.pending", pending)) return rc;
  return read_uint(d, "remapped_rows.failure", failure);
}

static Return clock(nv::Device h, const char* fn, const char* group, unsigned type, unsigned* mhz) {
  ENTER(h, fn);
  const char* name = clock_name(type);
  if (!mhz || !name) return nv::ERROR_INVALID_ARGUMENT;
  return read_uint(*dev(h), std::string(group) + "." + name, mhz);
}
FAKE_NVML_EXPORT Return nvmlDeviceGetClockInfo(nv::Device h, unsigned type, unsigned* mhz) {
  return clock(h, "nvmlDeviceGetClockInfo", "clocks", type, mhz);
}
FAKE_NVML_EXPORT Return nvmlDeviceGetApplicationsClock(nv::Device h, unsigned type, unsigned* mhz) {
  return clock(h, "nvmlDeviceGetApplicationsClock", "app_clocks", type, mhz);
}
FAKE_NVML_EXPORT Return nvmlDeviceGetMaxClockInfo(nv::Device h, unsigned type, unsigned* mhz) {
  return clock(h, "nvmlDeviceGetMaxClockInfo", "max_clocks", type, mhz);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetCurrentClocksEventReasons(nv::Device h, unsigned long long* mask) {
  ENTER(h, "nvmlDeviceGetCurrentClocksEventReasons");
  return mask ? read_uint(*dev(h), "clock_event_reasons", mask) : nv::ERROR_INVALID_ARGUMENT;
}
FAKE_NVML_EXPORT Return nvmlDeviceGetCurrentClocksThrottleReasons(nv::Device h, unsigned long long* mask) {
  return nvmlDeviceGetCurrentClocksEventReasons(h, mask);
}

#define FAKE_UINT_GETTER(fn, key)                                       \
  FAKE_NVML_EXPORT Return fn(nv::Device h, unsigned* v) {               \
    ENTER(h, #fn);                                                      \
    return v ? read_uint(*dev(h), key, v) : nv::ERROR_INVALID_ARGUMENT; \
  }
FAKE_UINT_GETTER(nvmlDeviceGetCurrPcieLinkGeneration, "pcie.gen")
FAKE_UINT_GETTER(nvmlDeviceGetCurrPcieLinkWidth, "pcie.width")
FAKE_UINT_GETTER(nvmlDeviceGetMaxPcieLinkGeneration, "pcie.max_gen")
FAKE_UINT_GETTER(nvmlDeviceGetMaxPcieLinkWidth, "pcie.max_width")
FAKE_UINT_GETTER(nvmlDeviceGetPcieReplayCounter, "pcie.replay")
FAKE_UINT_GETTER(nvmlDeviceGetFanSpeed, "fan_speed")
FAKE_UINT_GETTER(nvmlDeviceGetPerformanceState, "performance_state")
FAKE_UINT_GETTER(nvmlDeviceGetPersistenceMode, "persistence_mode")
FAKE_UINT_GETTER(nvmlDeviceGetMaxMigDeviceCount, "mig.max_devices")

FAKE_NVML_EXPORT Return nvmlDeviceGetPcieThroughput(nv::Device h, unsigned counter, unsigned* kbps) {
  ENTER(h, "nvmlDeviceGetPcieThroughput");
  if (!kbps || counter > nv::PCIE_RX) return nv::ERROR_INVALID_ARGUMENT;
  return read_uint(*dev(h), counter == nv::PCIE_TX ? "pcie.tx_kbps" : "pcie.rx_kbps", kbps);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetNvLinkState(nv::Device h, unsigned link, unsigned* active) {
  ENTER(h, "nvmlDeviceGetNvLinkState");
  if (!active || link >= nv::kNvLinkMaxLinks) return nv::ERROR_INVALID_ARGUMENT;
  return read_uint(*dev(h), "nvlinks." + std::to_string(link) + ".state", active);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetNvLinkErrorCounter(nv::Device h, unsigned link, unsigned counter,
                                                        unsigned long long* v) {
  ENTER(h, "nvmlDeviceGetNvLinkErrorCounter");
  static const char* kNames[] = {"replay", "recovery", "crc_flit", "crc_data"};
  if (!v || link >= nv::kNvLinkMaxLinks || counter > nv::NVLINK_CRC_DATA) return nv::ERROR_INVALID_ARGUMENT;
  return read_uint(*dev(h), "nvlinks." + std::to_string(link) + "." + kNames[counter], v);
}

FAKE_NVML_EXPORT Return nvmlDeviceGetEccMode(nv::Device h, unsigned* current, unsigned* pending) {
  ENTER(h, "nvmlDeviceGetEccMode");
  if (!current || !pending) return nv::ERROR_INVALID_ARGUMENT;
  if (Return rc = read_uint(*dev(h), "ecc.mode", current)) return rc;
  if (read_uint(*dev(h), "ecc.pending_mode", pending) != nv::SUCCESS) *pending = *current;
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetTotalEccErrors(nv::Device h, unsigned type, unsigned counter,
                                                    unsigned long long* v) {
  ENTER(h, "nvmlDeviceGetTotalEccErrors");
  if (!v || type > nv::ECC_UNCORRECTED || counter > nv::ECC_AGGREGATE) return nv::ERROR_INVALID_ARGUMENT;
  std::string key = std::string("ecc.") + (counter == nv::ECC_VOLATILE ? "volatile_" : "aggregate_") +
                    (type == nv::ECC_CORRECTED ? "corrected" : "uncorrected");
  return read_uint(*dev(h), key, v);
}

// Field values answer from the same scenario values as the getters they stand for, and a field takes that getter's
// fault (error, delay, hang; counted once per batch), so a scenario written for the getters means the same when the
// caller batches. Field ids: NVML API reference, NVML_FI_DEV_*.
namespace {
struct FieldSource {
  std::string key, fallback_key;  // fallback_key: read when key is absent (ECC pending mode defaults to the mode)
  const char* getter;             // whose fault applies; null: the field has no getter of its own
  int value_type;
};

bool field_source(unsigned id, FieldSource* src) {
  static const char* kLinkKeys[] = {"replay", "recovery", "crc_flit", "crc_data"};  // NvLinkErrorCounter order
  for (unsigned link = 0; link < nv::field::kNvLinkFieldLinks; ++link)
    for (unsigned k = 0; k < 4; ++k)
      if (id == nv::field::nvlink_error(k, link)) {
        *src = {"nvlinks." + std::to_string(link) + "." + kLinkKeys[k], "", "nvmlDeviceGetNvLinkErrorCounter",
                nv::VALUE_ULL};
        return true;
      }
  switch (id) {
    case nv::field::kEccCurrent:
      *src = {"ecc.mode", "", "nvmlDeviceGetEccMode", nv::VALUE_UINT};
      return true;
    case nv::field::kEccPending:
      *src = {"ecc.pending_mode", "ecc.mode", "nvmlDeviceGetEccMode", nv::VALUE_UINT};
      return true;
    case nv::field::kEccSbeVolTotal:
      *src = {"ecc.volatile_corrected", "", "nvmlDeviceGetTotalEccErrors", nv::VALUE_ULL};
      return true;
    case nv::field::kEccDbeVolTotal:
      *src = {"ecc.volatile_uncorrected", "", "nvmlDeviceGetTotalEccErrors", nv::VALUE_ULL};
      return true;
    case nv::field::kEccSbeAggTotal:
      *src = {"ecc.aggregate_corrected", "", "nvmlDeviceGetTotalEccErrors", nv::VALUE_ULL};
      return true;
    case nv::field::kEccDbeAggTotal:
      *src = {"ecc.aggregate_uncorrected", "", "nvmlDeviceGetTotalEccErrors", nv::VALUE_ULL};
      return true;
    case nv::field::kRetiredPending:
      *src = {"retired_pages.pending", "", "nvmlDeviceGetRetiredPagesPendingStatus", nv::VALUE_UINT};
      return true;
    case nv::field::kTotalEnergy:
      *src = {"energy", "", "nvmlDeviceGetTotalEnergyConsumption", nv::VALUE_ULL};
      return true;
    case nv::field::kPcieReplayCounter:
      *src = {"pcie.replay", "", "nvmlDeviceGetPcieReplayCounter", nv::VALUE_UINT};
      return true;
    case nv::field::kRemappedCor:
      *src = {"remapped_rows.correctable", "", "nvmlDeviceGetRemappedRows", nv::VALUE_UINT};
      return true;
    case nv::field::kRemappedUnc:
      *src = {"remapped_rows.uncorrectable", "", "nvmlDeviceGetRemappedRows", nv::VALUE_UINT};
      return true;
    case nv::field::kRemappedPending:
      *src = {"remapped_rows.pending", "", "nvmlDeviceGetRemappedRows", nv::VALUE_UINT};
      return true;
    case nv::field::kRemappedFailure:
      *src = {"remapped_rows.failure", "", "nvmlDeviceGetRemappedRows", nv::VALUE_UINT};
      return true;
    case nv::kFieldGpuRecoveryAction:
      *src = {"recovery_action", "", nullptr, nv::VALUE_UINT};
      return true;
  }
  return false;
}
}  // namespace

FAKE_NVML_EXPORT Return nvmlDeviceGetFieldValues(nv::Device h, int count, nv::FieldValue* values) {
  ENTER(h, "nvmlDeviceGetFieldValues");
  if (count <= 0 || !values) return nv::ERROR_INVALID_ARGUMENT;
  Device& d = *dev(h);
  std::map<std::string, Return> getter_faults;  // one fault (and one counted call) per getter per batch
  for (int i = 0; i < count; ++i) {
    nv::FieldValue& f = values[i];
    FieldSource src;
    f.value_type = nv::VALUE_UINT;
    f.nvml_return = nv::ERROR_NOT_SUPPORTED;
    if (!field_source(f.field_id, &src)) continue;
    if (src.getter) {
      auto it = getter_faults.find(src.getter);
      if (it == getter_faults.end()) it = getter_faults.emplace(src.getter, apply_fault(d, src.getter)).first;
      if (it->second != nv::SUCCESS) {
        f.nvml_return = it->second;
        continue;
      }
    }
    f.value_type = src.value_type;
    const std::string& key = src.fallback_key.empty() || lookup_has(d, src.key) ? src.key : src.fallback_key;
    f.nvml_return = src.value_type == nv::VALUE_ULL ? read_uint(d, key, &f.value.ull) : read_uint(d, key, &f.value.ui);
  }
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetComputeRunningProcesses_v3(nv::Device h, unsigned* count, nv::ProcessInfo* infos) {
  ENTER(h, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!count) return nv::ERROR_INVALID_ARGUMENT;
  const nlohmann::json& spec = dev(h)->spec;
  if (!spec.contains("processes")) {
    *count = 0;
    return nv::SUCCESS;
  }
  const auto& procs = spec["processes"];
  unsigned n = static_cast<unsigned>(procs.size());
  if (*count < n || (n > 0 && !infos)) {
    *count = n;
    return nv::ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < n; ++i) {
    std::string key = "processes[" + std::to_string(i) + "]";
    if (!procs[i].is_object()) return wrong_type(*dev(h), key, "an object", procs[i]);
    for (const char* k : {"pid", "used_memory", "gpu_instance_id", "compute_instance_id"})
      if (procs[i].contains(k) && !procs[i][k].is_number_unsigned())
        return wrong_type(*dev(h), key + "." + k, "an unsigned integer", procs[i][k]);
    if (!procs[i].contains("pid")) return wrong_type(*dev(h), key + ".pid", "an unsigned integer", nullptr);
    infos[i].pid = procs[i].at("pid").get<unsigned>();
    infos[i].used_gpu_memory = procs[i].value("used_memory", ~0ull);
    infos[i].gpu_instance_id = procs[i].value("gpu_instance_id", 0xFFFFFFFFu);
    infos[i].compute_instance_id = procs[i].value("compute_instance_id", 0xFFFFFFFFu);
  }
  *count = n;
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetMigMode(nv::Device h, unsigned* current, unsigned* pending) {
  ENTER(h, "nvmlDeviceGetMigMode");
  if (!current || !pending) return nv::ERROR_INVALID_ARGUMENT;
  if (Return rc = read_uint(*dev(h), "mig.mode", current)) return rc;
  if (read_uint(*dev(h), "mig.pending_mode", pending) != nv::SUCCESS) *pending = *current;
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlDeviceGetMigDeviceHandleByIndex(nv::Device h, unsigned index, nv::Device* out) {
  ENTER(h, "nvmlDeviceGetMigDeviceHandleByIndex");
  if (!out) return nv::ERROR_INVALID_ARGUMENT;
  for (auto& m : dev(h)->mig)
    if (m->index == index) {
      *out = handle(m.get());
      return nv::SUCCESS;
    }
  return nv::ERROR_NOT_FOUND;
}

// Events: a set holds the devices registered for XID events; waiting delivers each scenario XID once its time
// (milliseconds after registration) has come.
namespace {
struct FakeEventSet {
  std::mutex m;
  std::vector<Device*> devices;
};
}  // namespace

FAKE_NVML_EXPORT Return nvmlEventSetCreate(nv::EventSet* set) {
  if (g_refcount <= 0) return nv::ERROR_UNINITIALIZED;
  if (!set) return nv::ERROR_INVALID_ARGUMENT;
  *set = reinterpret_cast<nv::EventSet>(new FakeEventSet());
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlDeviceRegisterEvents(nv::Device h, unsigned long long types, nv::EventSet set) {
  ENTER(h, "nvmlDeviceRegisterEvents");
  if (!set) return nv::ERROR_INVALID_ARGUMENT;
  if (!(types & nv::kEventTypeXidCriticalError)) return nv::ERROR_NOT_SUPPORTED;
  auto* s = reinterpret_cast<FakeEventSet*>(set);
  std::lock_guard<std::mutex> lk(s->m);
  Device* d = dev(h);
  {
    std::lock_guard<std::mutex> dl(d->m);
    d->events_registered = true;
    d->events_registered_at = std::chrono::steady_clock::now();
  }
  s->devices.push_back(d);
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlEventSetWait_v2(nv::EventSet set, nv::EventData* data, unsigned timeout_ms) {
  if (g_refcount <= 0) return nv::ERROR_UNINITIALIZED;
  if (!set || !data) return nv::ERROR_INVALID_ARGUMENT;
  auto* s = reinterpret_cast<FakeEventSet*>(set);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    auto next = deadline;  // the next undelivered event's time: sleep until then, not in small steps (the agent
                           // waits here all the time, and a polling fake would show up as the agent's CPU)
    {
      std::lock_guard<std::mutex> lk(s->m);
      for (Device* d : s->devices) {
        std::lock_guard<std::mutex> dl(d->m);
        for (auto& x : d->xids) {
          if (x.delivered) continue;
          auto due = d->events_registered_at + std::chrono::milliseconds(x.at_ms);
          if (now < due) {
            next = std::min(next, due);
            continue;
          }
          x.delivered = true;
          data->device = handle(d);
          data->event_type = nv::kEventTypeXidCriticalError;
          data->event_data = x.xid;
          data->gpu_instance_id = 0xFFFFFFFFu;
          data->compute_instance_id = 0xFFFFFFFFu;
          return nv::SUCCESS;
        }
      }
    }
    if (now >= deadline) return nv::ERROR_TIMEOUT;
    std::this_thread::sleep_until(next);
  }
}

FAKE_NVML_EXPORT Return nvmlEventSetFree(nv::EventSet set) {
  if (!set) return nv::ERROR_INVALID_ARGUMENT;
  delete reinterpret_cast<FakeEventSet*>(set);
  return nv::SUCCESS;
}

#ifndef FAKE_NVML_NO_GPM  // the "older driver" build (libnvidia-ml.so.1 under fake_nvml_nogpm/) lacks these symbols
// GPM: a device supports it when its scenario says "gpm": {"supported": true, ...}; a sample records the device and
// the scenario time it was taken at, and nvmlGpmMetricsGet answers each metric from the scenario's value of that
// name (in NVML's units: percent for utilisations, MiB/s for bandwidths) at the second sample's time.
namespace {
struct FakeGpmSample {
  Device* device = nullptr;  // null until nvmlGpmSampleGet filled it
  double at_s = 0;
};

const char* gpm_metric_key(unsigned id) {
  switch (id) {
    case nv::GPM_GRAPHICS_UTIL:
      return "gpm.graphics_util";
    case nv::GPM_SM_UTIL:
      return "gpm.sm_util";
    case nv::GPM_SM_OCCUPANCY:
      return "gpm.sm_occupancy";
    case nv::GPM_ANY_TENSOR_UTIL:
      return "gpm.any_tensor_util";
    case nv::GPM_DRAM_BW_UTIL:
      return "gpm.dram_bw_util";
    case nv::GPM_PCIE_TX_PER_SEC:
      return "gpm.pcie_tx_per_sec";
    case nv::GPM_PCIE_RX_PER_SEC:
      return "gpm.pcie_rx_per_sec";
    case nv::GPM_NVLINK_TOTAL_RX_PER_SEC:
      return "gpm.nvlink_total_rx_per_sec";
    case nv::GPM_NVLINK_TOTAL_TX_PER_SEC:
      return "gpm.nvlink_total_tx_per_sec";
  }
  return nullptr;
}

bool gpm_supported(Device& d) {
  unsigned v = 0;
  return read_uint(d, "gpm.supported", &v) == nv::SUCCESS && v != 0;
}

char g_unit_percent[] = "%";
char g_unit_mibs[] = "MiB/s";
}  // namespace

FAKE_NVML_EXPORT Return nvmlGpmQueryDeviceSupport(nv::Device h, nv::GpmSupport* support) {
  ENTER(h, "nvmlGpmQueryDeviceSupport");
  if (!support || support->version != nv::kGpmSupportVersion) return nv::ERROR_INVALID_ARGUMENT;
  support->is_supported_device = gpm_supported(*dev(h)) ? 1 : 0;
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlGpmSampleAlloc(nv::GpmSample* sample) {
  if (g_refcount <= 0) return nv::ERROR_UNINITIALIZED;
  if (!sample) return nv::ERROR_INVALID_ARGUMENT;
  *sample = reinterpret_cast<nv::GpmSample>(new FakeGpmSample());
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlGpmSampleFree(nv::GpmSample sample) {
  if (!sample) return nv::ERROR_INVALID_ARGUMENT;
  delete reinterpret_cast<FakeGpmSample*>(sample);
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlGpmSampleGet(nv::Device h, nv::GpmSample sample) {
  ENTER(h, "nvmlGpmSampleGet");
  if (!sample) return nv::ERROR_INVALID_ARGUMENT;
  Device& d = *dev(h);
  if (!gpm_supported(d)) return nv::ERROR_NOT_SUPPORTED;
  auto* s = reinterpret_cast<FakeGpmSample*>(sample);
  s->device = &d;
  s->at_s = d.clock ? d.clock->now_s() : 0;
  return nv::SUCCESS;
}

FAKE_NVML_EXPORT Return nvmlGpmMetricsGet(nv::GpmMetricsGet* get) {
  if (g_refcount <= 0 || !g_scenario.load()) return nv::ERROR_UNINITIALIZED;
  if (!get || get->version != nv::kGpmMetricsGetVersion || get->num_metrics > nv::kGpmMetricArray)
    return nv::ERROR_INVALID_ARGUMENT;
  auto* s1 = reinterpret_cast<FakeGpmSample*>(get->sample1);
  auto* s2 = reinterpret_cast<FakeGpmSample*>(get->sample2);
  if (!s1 || !s2 || !s1->device || s1->device != s2->device || s2->at_s < s1->at_s) return nv::ERROR_INVALID_ARGUMENT;
  Device& d = *s2->device;
  if (Return rc = apply_fault(d, "nvmlGpmMetricsGet")) return rc;
  for (unsigned i = 0; i < get->num_metrics; ++i) {
    nv::GpmMetric& m = get->metrics[i];
    m.metric_info = {nullptr, nullptr, nullptr};
    m.value = 0;
    const char* key = gpm_metric_key(m.metric_id);
    nlohmann::json v;
    if (!key || !d.read(key, &v, s2->at_s)) {
      m.nvml_return = nv::ERROR_NOT_SUPPORTED;
      continue;
    }
    if (!v.is_number()) {
      m.nvml_return = wrong_type(d, key, "a number", v);
      continue;
    }
    m.value = v.get<double>();
    m.nvml_return = nv::SUCCESS;
    m.metric_info.short_name = const_cast<char*>(key + 4);  // after "gpm."
    m.metric_info.unit = m.metric_id >= nv::GPM_PCIE_TX_PER_SEC ? g_unit_mibs : g_unit_percent;
  }
  return nv::SUCCESS;
}
#endif  // FAKE_NVML_NO_GPM
