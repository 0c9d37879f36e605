// The one way NVML is called: watched_call() marks each call on its DeviceWorker's CallWatch, so the waiting side
// can name a hung call, and a missing entry point answers FUNCTION_NOT_FOUND without calling NVML. Two policies sit
// on it, because the two callers want different things of an error and of a hang:
// - Caller (sampling: nvml_monitor, the agent): runs inside one worker job per GPU sample, one hand-off for dozens
//   of calls; an error is "no value" (remembered in the sample), GPU_IS_LOST aborts the sample, and the sampler
//   waits for the whole job under its timeout.
// - TimedCaller (check-nvidia-smi): every call is its own job under --nvml-timeout, so a verdict names the call and
//   the GPU that failed or hung; every error is a failure (NvmlCallFailed), mapped to a result by the check.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "gpu/device_worker.h"
#include "gpu/gpu_sample.h"
#include "gpu/nvml_library.h"

namespace gcm {

template <typename Call>
nvml::Return watched_call(CallWatch& watch, const char* name, Call&& call) {
  watch.begin(name);
  nvml::Return rc = call();
  watch.end();
  return rc;
}

// The GPU answered NVML_ERROR_GPU_IS_LOST: it has fallen off the bus; no value of this sample may be used.
struct GpuLost : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Caller {
 public:
  Caller(const NvmlLibrary& lib, CallWatch& watch, GpuSample& out) : lib_(lib), watch_(watch), out_(out) {}

  // True when `fn` is present and returned SUCCESS. NOT_SUPPORTED (and its kin) is a plain "no value"; other
  // errors are remembered in the sample; GPU_IS_LOST aborts the sample.
  template <typename Fn, typename... Args>
  bool call(const char* name, Fn* fn, Args... args) {
    return check(name, call_raw_unchecked(name, fn, args...));
  }

  // Like call() but every return code comes back (size queries count INSUFFICIENT_SIZE as an answer); only
  // GPU_IS_LOST throws.
  template <typename Fn, typename... Args>
  nvml::Return call_raw(const char* name, Fn* fn, Args... args) {
    nvml::Return rc = call_raw_unchecked(name, fn, args...);
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
  template <typename Fn, typename... Args>
  nvml::Return call_raw_unchecked(const char* name, Fn* fn, Args... args) {
    if (!fn) return nvml::ERROR_FUNCTION_NOT_FOUND;
    nvml::Return rc = watched_call(watch_, name, [&] { return fn(args...); });
    // An entry point the driver lacks answers FUNCTION_NOT_FOUND from the loader's stub: no call into NVML.
    if (rc != nvml::ERROR_FUNCTION_NOT_FOUND) ++out_.nvml_calls;
    return rc;
  }

  const NvmlLibrary& lib_;
  CallWatch& watch_;
  GpuSample& out_;
};

// A call through TimedCaller that failed: rc is NVML's answer; nullopt when the call hung (did not return within
// the timeout, or was not made because the worker is still stuck in an earlier one).
struct NvmlCallFailed : std::runtime_error {
  NvmlCallFailed(const std::string& what, std::optional<nvml::Return> r) : std::runtime_error(what), rc(r) {}
  std::optional<nvml::Return> rc;
};

class TimedCaller {
 public:
  TimedCaller(std::shared_ptr<NvmlLibrary> lib, std::chrono::milliseconds timeout, std::string worker_name)
      : lib_(std::move(lib)), timeout_(timeout), worker_(std::move(worker_name)) {}
  const nvml::Api& api() const { return lib_->api(); }

  // Calls fn(api) on the worker; throws NvmlCallFailed for an error return or a hang. gpu: the GPU the call is
  // about; nullopt for calls of no GPU (the device count).
  template <typename Fn>
  void call(const char* name, std::optional<unsigned> gpu, Fn fn) {
    auto rc = std::make_shared<nvml::Return>(nvml::SUCCESS);
    auto lib = lib_;
    // The job owns what it writes (rc); the caller's out-parameters are only read when the job finished.
    if (!worker_.start(
            [rc, lib, name, fn](CallWatch& w) { *rc = watched_call(w, name, [&] { return fn(lib->api()); }); })) {
      // A hang met where nothing reports it (the gpu_node_id lookup) is told by the first call that follows.
      if (unreported_) throw NvmlCallFailed(*std::exchange(unreported_, std::nullopt), std::nullopt);
      // One worker serves every GPU: name the call that hangs and its GPU, not the GPU whose turn it is now.
      throw NvmlCallFailed(fmt::format("{}: {} not called: NVML is still stuck in {}", subject(name, gpu), name,
                                       stuck_ ? *stuck_ : std::string("an earlier call")),
                           std::nullopt);
    }
    std::string hung;
    if (worker_.wait(timeout_, &hung) == DeviceWorker::Outcome::CallTimedOut) {
      stuck_ = fmt::format("{} ({}, no answer after {} ms)", hung.empty() ? name : hung.c_str(), subject(name, gpu),
                           timeout_.count());
      throw NvmlCallFailed(fmt::format("{}: {} did not return within {} ms", subject(name, gpu),
                                       hung.empty() ? name : hung.c_str(), timeout_.count()),
                           std::nullopt);
    }
    if (*rc != nvml::SUCCESS)
      throw NvmlCallFailed(fmt::format("{}: {}: {}", subject(name, gpu), name, lib_->error_string(*rc)), *rc);
  }

  nvml::Device handle(unsigned gpu) {
    auto out = std::make_shared<nvml::Device>(nullptr);
    call("nvmlDeviceGetHandleByIndex_v2", gpu,
         [gpu, out](const nvml::Api& a) { return a.DeviceGetHandleByIndex(gpu, out.get()); });
    return *out;
  }

  unsigned count() {
    auto n = std::make_shared<unsigned>(0);
    call("nvmlDeviceGetCount_v2", std::nullopt, [n](const nvml::Api& a) { return a.DeviceGetCount(n.get()); });
    return *n;
  }

  // One getter of GPU `gpu`: fn(api, handle, &value).
  template <typename T, typename Fn>
  T get(const char* name, unsigned gpu, Fn fn) {
    nvml::Device h = handle(gpu);
    auto v = std::make_shared<T>();
    call(name, gpu, [h, v, fn](const nvml::Api& a) { return fn(a, h, v.get()); });
    return *v;
  }

  // A failure that was caught without being shown: when it was a hang, the next call shows it instead.
  void defer_if_hung(const std::string& failure) {
    if (stuck_) unreported_ = failure;
  }

 private:
  // "GPU 1", or "the device count" for a call of no GPU.
  static std::string subject(const char* name, std::optional<unsigned> gpu) {
    if (gpu) return fmt::format("GPU {}", *gpu);
    return std::string_view(name).find("GetCount") != std::string_view::npos ? "the device count" : "NVML";
  }

  std::shared_ptr<NvmlLibrary> lib_;
  std::chrono::milliseconds timeout_;
  DeviceWorker worker_;
  std::optional<std::string> stuck_;       // the call that timed out and what it was about, while the worker is stuck
  std::optional<std::string> unreported_;  // the timeout of a call whose failure no sub-check has shown
};

}  // namespace gcm
