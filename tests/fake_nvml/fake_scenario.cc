#include "fake_scenario.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/json_limits.h"
#include "gpu/nvml_api.h"

namespace fake_nvml {
namespace {

// "nvmlDeviceGetComputeRunningProcesses_v3" and "nvmlDeviceGetComputeRunningProcesses" name the same fault.
std::string base_name(const std::string& fn) {
  auto pos = fn.rfind("_v");
  if (pos != std::string::npos && pos + 2 < fn.size() &&
      fn.find_first_not_of("0123456789", pos + 2) == std::string::npos)
    return fn.substr(0, pos);
  return fn;
}

int parse_error(const nlohmann::json& j) {
  if (j.is_number_integer()) return j.get<int>();
  int rc = gcm::nvml::return_code_from_name(j.get<std::string>().c_str());
  if (rc < 0) throw std::runtime_error("unknown NVML error name '" + j.get<std::string>() + "'");
  return rc;
}

const nlohmann::json* lookup(const nlohmann::json& spec, const std::string& dotted) {
  const nlohmann::json* cur = &spec;
  size_t i = 0;
  while (i <= dotted.size()) {
    size_t j = dotted.find('.', i);
    if (j == std::string::npos) j = dotted.size();
    std::string part = dotted.substr(i, j - i);
    if (cur->is_object()) {
      auto it = cur->find(part);
      if (it == cur->end()) return nullptr;
      cur = &*it;
    } else if (cur->is_array() && !part.empty() && part.find_first_not_of("0123456789") == std::string::npos) {
      size_t k = std::stoul(part);
      if (k >= cur->size()) return nullptr;
      cur = &(*cur)[k];
    } else {
      return nullptr;
    }
    i = j + 1;
  }
  return cur;
}

void validate_faults(const nlohmann::json& spec) {
  for (const char* key : {"errors", "delays"}) {
    if (!spec.contains(key)) continue;
    for (auto& [fn, f] : spec[key].items()) {
      if (f.is_object() && f.contains("error")) parse_error(f["error"]);
      if (f.is_string() || f.is_number_integer()) parse_error(f);
    }
  }
}

std::unique_ptr<Device> make_device(const nlohmann::json& spec, unsigned index, Device* parent) {
  auto d = std::make_unique<Device>();
  d->spec = spec;
  d->index = index;
  d->parent = parent;
  validate_faults(spec);
  if (spec.contains("xid_events"))
    for (const auto& e : spec["xid_events"])
      d->xids.push_back({e.at("xid").get<unsigned long long>(), e.value("at_ms", int64_t{0}), false});
  if (spec.contains("mig") && spec["mig"].contains("devices"))
    for (const auto& m : spec["mig"]["devices"]) {
      unsigned slot = m.value("index", static_cast<unsigned>(d->mig.size()));
      d->mig.push_back(make_device(m, slot, d.get()));
    }
  return d;
}

}  // namespace

std::string describe(const Device& d) {
  std::string self = "devices[" + std::to_string(d.index) + "]";
  return d.parent ? describe(*d.parent) + ".mig." + self : self;
}

bool Device::read(const std::string& key, nlohmann::json* out) {
  const nlohmann::json* v = lookup(spec, key);
  if (!v || v->is_null()) return false;
  if (v->is_array()) {
    if (v->empty()) return false;
    std::lock_guard<std::mutex> lk(m);
    int64_t n = reads[key]++;
    size_t i = static_cast<size_t>(n) < v->size() ? static_cast<size_t>(n) : v->size() - 1;
    *out = (*v)[i];
  } else {
    *out = *v;
  }
  return true;
}

Fault Device::fault_for(const std::string& function) {
  std::string fn = base_name(function);
  int64_t n;
  {
    std::lock_guard<std::mutex> lk(m);
    n = calls[fn]++;
  }
  Fault f;
  bool failed = false;
  // "ms": "10", "hang": 1, ...: said on stderr, and the call answers NVML_ERROR_UNKNOWN; never an abort.
  auto report = [&](const std::string& key) {
    std::fprintf(stderr, "fake libnvidia-ml: scenario fault of %s on %s: '%s' has the wrong type (ms, after_calls, "
                 "for_calls: integers; hang: true or false; error: a name or a code)\n", function.c_str(),
                 describe(*this).c_str(), key.c_str());
    failed = true;
  };
  auto apply = [&](const char* section) {
    if (!spec.contains(section)) return;
    const auto& sec = std::as_const(spec)[section];  // const: no insertion, safe from several threads
    const nlohmann::json* e = nullptr;
    for (const std::string& name : {function, fn})
      if (sec.contains(name)) {
        e = &sec[name];
        break;
      }
    if (!e) return;
    // Read without exceptions: this runs inside NVML calls, and an exception thrown in this library can meet the
    // unwinder of the program that loaded it (nvml_device_tests links libstdc++ statically too; under ASan the
    // program's __cxa_throw is the one called) and abort instead of being caught.
    std::string bad;
    auto integer = [&](const char* key, int64_t fallback) {
      if (!e->is_object() || !e->contains(key)) return fallback;
      const auto& v = (*e)[key];
      if (v.is_number_integer()) return v.get<int64_t>();
      bad = key;
      return fallback;
    };
    int64_t after = integer("after_calls", 0);
    int64_t count = integer("for_calls", INT64_MAX - after);
    if (!bad.empty()) return report(bad);
    if (n < after || n - after >= count) return;
    f.after_calls = after;
    if (e->is_object()) {
      if (e->contains("error")) {
        const auto& er = (*e)["error"];
        if (!er.is_number_integer() && !er.is_string()) return report("error");
        f.error = parse_error(er);  // a name was checked when the scenario was loaded
      }
      f.delay_ms = integer("ms", f.delay_ms);
      if (e->contains("hang")) {
        if (!(*e)["hang"].is_boolean()) return report("hang");
        f.hang = (*e)["hang"].get<bool>();
      }
      if (!bad.empty()) return report(bad);
    } else {
      f.error = parse_error(*e);
    }
  };
  apply("errors");
  apply("delays");
  if (failed) {
    f = Fault{};
    f.error = gcm::nvml::ERROR_UNKNOWN;
  }
  return f;
}

Scenario* load_scenario() {
  const char* path = std::getenv("GCM_FAKE_NVML_SCENARIO");
  if (!path || !*path) {
    std::fprintf(stderr, "fake libnvidia-ml: GCM_FAKE_NVML_SCENARIO is not set; acting as a host without a driver\n");
    return nullptr;
  }
  try {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open the file");
    std::ostringstream text;
    text << in.rdbuf();
    // Kept reachable from a global so leak checkers see the intended "never freed" as still in use.
    static auto* all = new std::vector<Scenario*>();
    auto* s = new Scenario();
    all->push_back(s);
    gcm::JsonLimits limits;
    limits.ignore_comments = true;
    // Without an exception: one thrown inside this library aborts under ASan (the loading program's unwinder meets
    // this library's statically linked one).
    std::string why;
    s->spec = gcm::parse_json_limited(text.str(), &why, limits);
    if (s->spec.is_discarded()) {
      std::fprintf(stderr, "fake libnvidia-ml: scenario '%s': %s\n", path, why.c_str());
      return nullptr;
    }
    s->global.spec = s->spec;
    validate_faults(s->spec);
    unsigned i = 0;
    for (const auto& d : s->spec.value("devices", nlohmann::json::array())) s->devices.push_back(make_device(d, i++, nullptr));
    return s;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake libnvidia-ml: scenario '%s': %s\n", path, e.what());
    return nullptr;
  }
}

}  // namespace fake_nvml
