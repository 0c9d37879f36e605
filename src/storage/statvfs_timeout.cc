#include "storage/statvfs_timeout.h"

#include <cerrno>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace gcm {

StatvfsResult statvfs_with_timeout(const std::string& path, std::chrono::milliseconds timeout) {
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    StatvfsResult result;
  };
  auto shared = std::make_shared<Shared>();
  std::thread([shared, path] {
    StatvfsResult r;
    if (::statvfs(path.c_str(), &r.st) == 0) {
      r.status = StatvfsStatus::Ok;
    } else {
      r.status = StatvfsStatus::Failed;
      r.error = errno;
    }
    std::lock_guard lock(shared->mu);
    shared->result = r;
    shared->done = true;
    shared->cv.notify_all();
  }).detach();
  std::unique_lock lock(shared->mu);
  if (!shared->cv.wait_for(lock, timeout, [&] { return shared->done; })) {
    StatvfsResult r;
    r.status = StatvfsStatus::TimedOut;
    return r;
  }
  return shared->result;
}

}  // namespace gcm
