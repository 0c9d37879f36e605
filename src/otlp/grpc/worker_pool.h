// A fixed set of threads running queued jobs, for the gRPC server's handlers (see grpc_server.h: handlers must not
// run on gRPC's threads). The queue is bounded by the bytes its jobs hold, so a burst of large requests is refused
// rather than buffered without limit.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gcm::otlp::grpc_module {

class WorkerPool {
 public:
  WorkerPool(int threads, size_t max_queued_bytes) : max_queued_bytes_(max_queued_bytes) {
    for (int i = 0; i < (threads > 0 ? threads : 1); ++i) threads_.emplace_back([this] { work(); });
  }
  ~WorkerPool() { stop(); }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // False when stopping or when `bytes` more would exceed the bound (one job alone is always taken when the queue
  // is empty, so a request within the message limit is never refused for its size only).
  bool submit(size_t bytes, std::function<void()> job) {
    std::lock_guard lock(mu_);
    if (stopping_ || (!queue_.empty() && queued_bytes_ + bytes > max_queued_bytes_)) return false;
    queued_bytes_ += bytes;
    queue_.push_back({bytes, std::move(job)});
    cv_.notify_one();
    return true;
  }

  // Runs what is queued, then joins the threads.
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }

 private:
  struct Job {
    size_t bytes;
    std::function<void()> run;
  };

  void work() {
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mu_);
        // No timeout needed: stop() sets stopping_ under the lock and wakes every thread.
        cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
        queued_bytes_ -= job.bytes;
      }
      job.run();
    }
  }

  const size_t max_queued_bytes_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  size_t queued_bytes_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace gcm::otlp::grpc_module
