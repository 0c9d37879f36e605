// What the two vendor loaders (nvml_library.h, amdsmi_library.h) share: resolving a table of entry points with
// dlsym, where a missing optional one becomes a stub that answers the library's "function not found" code, and
// running a library's init or shutdown on a thread the caller can stop waiting for.
#pragma once

#include <dlfcn.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace gcm {

// The stub of an entry point the library does not export: answers kMissing like a call the GPU does not support,
// so callers never hold a null pointer.
template <auto kMissing, typename Fn>
struct MissingEntryPoint;
template <auto kMissing, typename R, typename... Args>
struct MissingEntryPoint<kMissing, R (*)(Args...)> {
  static R call(Args...) { return static_cast<R>(kMissing); }
};

template <typename Fn>
struct EntryPointResult;
template <typename R, typename... Args>
struct EntryPointResult<R (*)(Args...)> {
  using type = R;
};

// Resolves entry points of one dlopen'ed library; `Status` is its return type, kMissing what a stub answers.
template <typename Status, Status kMissing>
struct EntryPointBinder {
  void* handle;
  std::vector<std::string>& missing;          // optional entry points the library lacks (they answer kMissing)
  std::vector<std::string> missing_required;  // required ones: the library is not usable

  // Binds the first of `names` the library exports (newer versioned names first). An entry point that does not
  // return Status (a string getter) is left null when missing.
  template <typename Fn>
  void bind(Fn& slot, std::initializer_list<const char*> names, bool required) {
    for (const char* n : names) {
      if (void* p = ::dlsym(handle, n)) {
        slot = reinterpret_cast<Fn>(p);
        return;
      }
    }
    if constexpr (std::is_same_v<typename EntryPointResult<Fn>::type, Status>)
      slot = &MissingEntryPoint<kMissing, Fn>::call;
    else
      slot = nullptr;
    (required ? missing_required : missing).push_back(*names.begin());
  }
};

// Runs `call` on a detached thread and waits at most `timeout` for it: a wedged driver can block a library's init
// for minutes, and the caller must be able to give up. The state is shared so that a thread that returns late
// touches nothing freed. *timed_out tells which; the result is `fallback` when it timed out.
template <typename R>
R call_with_timeout(std::function<R()> call, std::chrono::milliseconds timeout, bool* timed_out, R fallback) {
  struct State {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    R rc;
  };
  auto st = std::make_shared<State>();
  st->rc = fallback;
  std::thread([st, call = std::move(call)] {
    R rc = call();
    std::lock_guard<std::mutex> lk(st->m);
    st->rc = rc;
    st->done = true;
    st->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lk(st->m);
  *timed_out = !st->cv.wait_for(lk, timeout, [&] { return st->done; });
  return st->rc;
}

}  // namespace gcm
