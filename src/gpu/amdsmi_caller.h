// The one way amdsmi is called while sampling: each call marked on the worker's CallWatch (so the sampler can name
// a hung one, under the same call timeout and sample budget as NVML's), counted in GpuSample::nvml_calls (the
// record's amdsmi_calls), and its status turned into "a value" or "no value": NOT_SUPPORTED and its kin are a
// plain null; any other error is also remembered in the sample's errors (the record's amdsmi_errors).
#pragma once

#include <fmt/format.h>

#include "gpu/amdsmi_library.h"
#include "gpu/device_worker.h"
#include "gpu/gpu_sample.h"

namespace gcm {

class AmdsmiCaller {
 public:
  AmdsmiCaller(const AmdsmiLibrary& lib, CallWatch& watch, GpuSample& out) : lib_(lib), watch_(watch), out_(out) {}

  // True when the call returned SUCCESS.
  template <typename Fn, typename... Args>
  bool call(const char* name, Fn* fn, Args... args) {
    return check(name, call_raw(name, fn, args...));
  }

  // Every status comes back (a list query counts OUT_OF_RESOURCES as an answer); nothing is recorded.
  template <typename Fn, typename... Args>
  amdsmi::Status call_raw(const char* name, Fn* fn, Args... args) {
    if (!fn) return amdsmi::STATUS_GCM_FUNCTION_NOT_FOUND;
    watch_.begin(name);
    amdsmi::Status rc = fn(args...);
    watch_.end();
    // An entry point the library lacks answers from the loader's stub: no call into amdsmi.
    if (rc != amdsmi::STATUS_GCM_FUNCTION_NOT_FOUND) ++out_.nvml_calls;
    return rc;
  }

  bool check(const char* name, amdsmi::Status rc) {
    switch (rc) {
      case amdsmi::STATUS_SUCCESS:
        return true;
      case amdsmi::STATUS_NOT_SUPPORTED:
      case amdsmi::STATUS_NOT_YET_IMPLEMENTED:
      case amdsmi::STATUS_GCM_FUNCTION_NOT_FOUND:
      case amdsmi::STATUS_NOT_FOUND:
      case amdsmi::STATUS_NO_DATA:
        return false;
      default:
        out_.errors.push_back(fmt::format("{}: {}", name, lib_.error_string(rc)));
        return false;
    }
  }

 private:
  const AmdsmiLibrary& lib_;
  CallWatch& watch_;
  GpuSample& out_;
};

}  // namespace gcm
