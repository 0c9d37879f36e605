#include "fake_scenario.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/json_limits.h"

namespace fake_nvml {
namespace {

// "nvmlDeviceGetComputeRunningProcesses_v3" and "nvmlDeviceGetComputeRunningProcesses" name the same fault (amdsmi's
// names have no version suffix).
std::string base_name(const std::string& fn) {
  auto pos = fn.rfind("_v");
  if (pos != std::string::npos && pos + 2 < fn.size() &&
      fn.find_first_not_of("0123456789", pos + 2) == std::string::npos)
    return fn.substr(0, pos);
  return fn;
}

int64_t parse_error(const nlohmann::json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  int64_t rc = kFlavour.error_from_name(j.get<std::string>().c_str());
  if (rc < 0) throw std::runtime_error("unknown error name '" + j.get<std::string>() + "'");
  return rc;
}

std::string env_name(const char* suffix) { return std::string(kFlavour.env_prefix) + suffix; }

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

// A value that changes with time or carries noise: an object with "schedule" and/or "jitter".
bool is_dynamic(const nlohmann::json& v) { return v.is_object() && (v.contains("schedule") || v.contains("jitter")); }

bool is_plain_value(const nlohmann::json& v) {
  if (v.is_number() || v.is_boolean() || v.is_string()) return true;
  if (!v.is_array() || v.empty()) return false;
  for (const auto& e : v)
    if (!(e.is_number() || e.is_boolean() || e.is_string())) return false;
  return true;
}

// Checks every schedule and jitter of the scenario when it is loaded, so reading one later cannot fail.
void validate_dynamic(const nlohmann::json& v, const std::string& where) {
  if (is_dynamic(v)) {
    auto bad = [&](const std::string& why) { throw std::runtime_error(where + ": " + why); };
    if (v.contains("schedule")) {
      const auto& sch = v["schedule"];
      if (!sch.is_array() || sch.empty()) bad("\"schedule\" must be a non-empty array of {from_s, value}");
      double last = -1;
      for (size_t i = 0; i < sch.size(); ++i) {
        const auto& st = sch[i];
        std::string at = "schedule[" + std::to_string(i) + "]";
        if (!st.is_object() || !st.contains("from_s") || !st["from_s"].is_number() || !st.contains("value"))
          bad(at + " must be {\"from_s\": seconds, \"value\": ...}");
        double from = st["from_s"].get<double>();
        if (from < 0 || from < last) bad(at + ".from_s must be >= 0 and not below the stage before");
        last = from;
        if (!is_plain_value(st["value"])) bad(at + ".value must be a number, string, boolean or a series of them");
      }
    } else if (!v.contains("value") || !is_plain_value(v["value"])) {
      bad("a value with \"jitter\" and no \"schedule\" needs \"value\"");
    }
    if (v.contains("jitter") &&
        (!v["jitter"].is_number() || v["jitter"].get<double>() < 0 || v["jitter"].get<double>() >= 1))
      bad("\"jitter\" must be a number in [0, 1) (relative noise)");
    return;
  }
  if (v.is_object())
    for (auto& [k, e] : v.items()) validate_dynamic(e, where + "." + k);
  else if (v.is_array())
    for (size_t i = 0; i < v.size(); ++i) validate_dynamic(v[i], where + "." + std::to_string(i));
}

// Deterministic noise in [-1, 1] for one read (splitmix64 of the seed, the value's place and the read number).
double noise(uint64_t seed, const std::string& place, int64_t n) {
  uint64_t x = seed ^ std::hash<std::string>{}(place) ^ (static_cast<uint64_t>(n) * 0x9e3779b97f4a7c15ULL);
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) / static_cast<double>(1ULL << 52) - 1.0;
}

void set_clock(Device& d, const Clock* c) {
  d.clock = c;
  for (auto& m : d.mig) set_clock(*m, c);
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

double Clock::now_s() const {
  double real;
  if (wall_epoch) {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    real = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9 - epoch_unix_s;
  } else {
    real = std::chrono::duration<double>(std::chrono::steady_clock::now() - loaded_at).count();
  }
  return real / time_scale;
}

bool Device::read(const std::string& key, nlohmann::json* out, double at_s) {
  const nlohmann::json* v = lookup(spec, key);
  if (!v || v->is_null()) return false;
  const nlohmann::json* dyn = nullptr;
  if (is_dynamic(*v)) {  // checked at load: a schedule of {from_s, value} or a "value", and a jitter in [0, 1)
    dyn = v;
    if (v->contains("schedule")) {
      double t = at_s >= 0 ? at_s : (clock ? clock->now_s() : 0);
      const auto& sch = (*v)["schedule"];
      size_t stage = 0;
      for (size_t i = 0; i < sch.size(); ++i)
        if (sch[i]["from_s"].get<double>() <= t) stage = i;
      v = &sch[stage]["value"];
    } else {
      v = &(*v)["value"];
    }
  }
  int64_t n = 0;
  if (v->is_array() || dyn) {
    if (v->is_array() && v->empty()) return false;
    std::lock_guard<std::mutex> lk(m);
    n = reads[key]++;
  }
  if (v->is_array()) {
    size_t i = static_cast<size_t>(n) < v->size() ? static_cast<size_t>(n) : v->size() - 1;
    *out = (*v)[i];
  } else {
    *out = *v;
  }
  double jitter = dyn && dyn->contains("jitter") ? (*dyn)["jitter"].get<double>() : 0;
  if (jitter > 0 && out->is_number()) {
    double x = out->get<double>() * (1 + jitter * noise(clock ? clock->seed : 1, describe(*this) + "." + key, n));
    if (out->is_number_unsigned())
      *out = static_cast<uint64_t>(std::llround(std::max(0.0, x)));
    else if (out->is_number_integer())
      *out = static_cast<int64_t>(std::llround(x));
    else
      *out = x;
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
  // "ms": "10", "hang": 1, ...: said on stderr, and the call answers the flavour's unknown error
  // (NVML_ERROR_UNKNOWN); never an abort.
  auto report = [&](const std::string& key) {
    std::fprintf(stderr,
                 "%s: scenario fault of %s on %s: '%s' has the wrong type (ms, after_calls, "
                 "for_calls: integers; hang: true or false; error: a name or a code)\n",
                 kFlavour.library, function.c_str(), describe(*this).c_str(), key.c_str());
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
    f.error = kFlavour.unknown_error;
  }
  return f;
}

Scenario* load_scenario() {
  const std::string scenario_var = env_name("_SCENARIO"), scale_var = env_name("_TIME_SCALE"),
                    epoch_var = env_name("_EPOCH");
  const char* path = std::getenv(scenario_var.c_str());
  if (!path || !*path) {
    std::fprintf(stderr, "%s: %s is not set; acting as a host without a driver\n", kFlavour.library,
                 scenario_var.c_str());
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
      std::fprintf(stderr, "%s: scenario '%s': %s\n", kFlavour.library, path, why.c_str());
      return nullptr;
    }
    s->global.spec = s->spec;
    validate_faults(s->spec);
    validate_dynamic(s->spec, "scenario");
    if (s->spec.contains("time_scale")) {
      if (!s->spec["time_scale"].is_number() || s->spec["time_scale"].get<double>() <= 0)
        throw std::runtime_error("\"time_scale\" must be a number > 0");
      s->clock.time_scale = s->spec["time_scale"].get<double>();
    }
    if (const char* env = std::getenv(scale_var.c_str()); env && *env) {
      char* end = nullptr;
      double v = std::strtod(env, &end);
      if (*end || !(v > 0)) throw std::runtime_error(scale_var + "='" + env + "' is not a number > 0");
      s->clock.time_scale = v;
    }
    if (const char* env = std::getenv(epoch_var.c_str()); env && *env) {
      char* end = nullptr;
      double v = std::strtod(env, &end);
      if (*end || !std::isfinite(v)) throw std::runtime_error(epoch_var + "='" + env + "' is not Unix time in seconds");
      s->clock.wall_epoch = true;
      s->clock.epoch_unix_s = v;
    }
    if (s->spec.contains("seed")) {
      if (!s->spec["seed"].is_number_unsigned()) throw std::runtime_error("\"seed\" must be an unsigned integer");
      s->clock.seed = s->spec["seed"].get<uint64_t>();
    }
    s->global.clock = &s->clock;
    unsigned i = 0;
    for (const auto& d : s->spec.value("devices", nlohmann::json::array()))
      s->devices.push_back(make_device(d, i++, nullptr));
    for (auto& d : s->devices) set_clock(*d, &s->clock);
    return s;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: scenario '%s': %s\n", kFlavour.library, path, e.what());
    return nullptr;
  }
}

}  // namespace fake_nvml
