#include "gpu/device_worker.h"

#include <pthread.h>

#include <algorithm>
#include <cstdint>

namespace gcm {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void CallWatch::begin(const char* call) {
  started_ns_.store(now_ns(), std::memory_order_relaxed);
  call_.store(call, std::memory_order_release);
}

void CallWatch::end() { call_.store(nullptr, std::memory_order_release); }

const char* CallWatch::current(int64_t* started_ns) const {
  const char* c = call_.load(std::memory_order_acquire);
  *started_ns = started_ns_.load(std::memory_order_relaxed);
  return c;
}

DeviceWorker::DeviceWorker(std::string name) : st_(std::make_shared<State>()) {
  thread_ = std::thread(&DeviceWorker::loop, st_);
  // Thread names show up in top/gdb; the kernel limits them to 15 characters.
  ::pthread_setname_np(thread_.native_handle(), name.substr(0, 15).c_str());
}

DeviceWorker::~DeviceWorker() {
  bool stuck;
  {
    std::lock_guard<std::mutex> lk(st_->m);
    st_->stop = true;
    stuck = st_->running;
    st_->cv.notify_all();
  }
  // A thread stuck inside NVML cannot be joined or cancelled safely; it keeps the shared state alive by itself.
  if (stuck)
    thread_.detach();
  else
    thread_.join();
}

void DeviceWorker::loop(std::shared_ptr<State> st) {
  std::unique_lock<std::mutex> lk(st->m);
  for (;;) {
    st->cv.wait(lk, [&] { return st->stop || st->has_job; });
    if (st->stop) return;
    Job job = std::move(st->job);
    st->has_job = false;
    st->running = true;
    lk.unlock();
    try {
      job(st->watch);
    } catch (...) {
      // Jobs report their own errors; nothing may escape a worker thread.
    }
    st->watch.end();
    lk.lock();
    st->running = false;
    st->cv.notify_all();
  }
}

bool DeviceWorker::start(Job job) {
  std::lock_guard<std::mutex> lk(st_->m);
  if (st_->running || st_->has_job) return false;
  st_->job = std::move(job);
  st_->has_job = true;
  st_->cv.notify_all();
  return true;
}

bool DeviceWorker::busy() const {
  std::lock_guard<std::mutex> lk(st_->m);
  return st_->running || st_->has_job;
}

DeviceWorker::Outcome DeviceWorker::wait(std::chrono::milliseconds call_timeout, std::string* hung_call,
                                         std::optional<std::chrono::steady_clock::time_point> job_deadline) {
  const int64_t timeout_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(call_timeout).count();
  const int64_t deadline_ns =
      job_deadline ? std::chrono::duration_cast<std::chrono::nanoseconds>(job_deadline->time_since_epoch()).count()
                   : INT64_MAX;
  std::unique_lock<std::mutex> lk(st_->m);
  for (;;) {
    if (!st_->running && !st_->has_job) return Outcome::Finished;
    int64_t started = 0;
    const char* call = st_->watch.current(&started);
    int64_t now = now_ns();
    if (call && now - started >= timeout_ns) {
      if (hung_call) *hung_call = call;
      return Outcome::CallTimedOut;
    }
    if (now >= deadline_ns) {
      if (hung_call) *hung_call = call ? call : "";
      return Outcome::JobTimedOut;
    }
    // Wake when the job ends, when the call in progress would reach its timeout, or at the job's deadline. Between
    // calls, recheck after one timeout: the next call will have started by then.
    int64_t wake_in = std::min(call ? started + timeout_ns - now : timeout_ns, deadline_ns - now);
    st_->cv.wait_for(lk, std::chrono::nanoseconds(wake_in));
  }
}

}  // namespace gcm
