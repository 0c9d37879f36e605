// The gRPC server's worker pool (otlp/grpc/worker_pool.h): jobs run on its threads, the queue is bounded by the
// bytes its jobs hold, and stop() runs what was queued.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>

#include "otlp/grpc/worker_pool.h"

namespace gcm::otlp::grpc_module {
namespace {

using namespace std::chrono_literals;

TEST(GrpcWorkerPool, QueuedBytesAreBoundedAndStopRunsWhatWasQueued) {
  WorkerPool pool(1, 100);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  // The only worker is held by the first job, so the next ones wait in the queue.
  ASSERT_TRUE(pool.submit(0, [&] {
    started.set_value();
    released.wait_for(10s);
  }));
  ASSERT_EQ(started.get_future().wait_for(10s), std::future_status::ready);
  std::atomic<int> ran{0};
  EXPECT_TRUE(pool.submit(60, [&] { ++ran; }));
  EXPECT_FALSE(pool.submit(60, [&] { ++ran; })) << "120 bytes queued over a bound of 100";
  EXPECT_TRUE(pool.submit(40, [&] { ++ran; }));
  release.set_value();
  pool.stop();
  EXPECT_EQ(ran.load(), 2);
  EXPECT_FALSE(pool.submit(1, [&] { ++ran; })) << "stopped";
}

TEST(GrpcWorkerPool, AJobLargerThanTheBoundIsTakenWhenTheQueueIsEmpty) {
  WorkerPool pool(2, 10);
  std::promise<void> done;
  ASSERT_TRUE(pool.submit(1000, [&] { done.set_value(); }));
  EXPECT_EQ(done.get_future().wait_for(10s), std::future_status::ready);
}

}  // namespace
}  // namespace gcm::otlp::grpc_module
