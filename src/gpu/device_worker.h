// One thread per GPU that runs that GPU's NVML calls, so a call that hangs (a wedged GPU, a driver stuck in a
// reset) stalls only its own worker. The caller waits for a job until it finishes or until the NVML call in progress
// has run longer than the call timeout; a worker still stuck in a call refuses new jobs instead of queueing them.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace gcm {

// What the worker is doing right now; the job marks each NVML call's start and end through it.
class CallWatch {
 public:
  void begin(const char* call);
  void end();
  // The call in progress and when it started (steady clock ns); nullptr when between calls.
  const char* current(int64_t* started_ns) const;

 private:
  std::atomic<const char*> call_{nullptr};
  std::atomic<int64_t> started_ns_{0};
};

class DeviceWorker {
 public:
  using Job = std::function<void(CallWatch&)>;
  explicit DeviceWorker(std::string name);
  ~DeviceWorker();
  DeviceWorker(const DeviceWorker&) = delete;
  DeviceWorker& operator=(const DeviceWorker&) = delete;

  // Hands the worker a job. False when the previous job has not finished (the worker is stuck in a call).
  bool start(Job job);
  enum class Outcome { Finished, CallTimedOut, JobTimedOut };
  // Waits for the job given to start(). On CallTimedOut, *hung_call names the NVML call that exceeded the timeout;
  // on JobTimedOut the job as a whole passed `job_deadline` (many slow calls, none past the call timeout) and
  // *hung_call names the call in progress, if any. Either way the job's results must be discarded (the job keeps
  // running and may still write to them later, so they must be owned by the job, not the caller's stack).
  Outcome wait(std::chrono::milliseconds call_timeout, std::string* hung_call,
               std::optional<std::chrono::steady_clock::time_point> job_deadline = std::nullopt);
  bool busy() const;

 private:
  // Shared with the thread so that a thread stuck in a call can outlive the worker (it is then detached).
  struct State {
    std::mutex m;
    std::condition_variable cv;
    Job job;
    bool has_job = false;
    bool running = false;
    bool stop = false;
    CallWatch watch;
  };
  static void loop(std::shared_ptr<State> st);
  std::shared_ptr<State> st_;
  std::thread thread_;
};

}  // namespace gcm
