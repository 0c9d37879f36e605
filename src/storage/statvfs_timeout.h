// statvfs(2) with a timeout. A dead NFS server makes statvfs block in the kernel, uninterruptibly; the call runs on
// a helper thread, and on timeout the caller moves on (the thread is abandoned and finishes whenever the kernel
// lets it), so one hung mount never stalls the other mounts or the collector.
#pragma once

#include <sys/statvfs.h>

#include <chrono>
#include <string>

namespace gcm {

enum class StatvfsStatus { Ok, Failed, TimedOut };

struct StatvfsResult {
  StatvfsStatus status = StatvfsStatus::Failed;
  struct statvfs st {};
  int error = 0;  // errno when Failed
};

StatvfsResult statvfs_with_timeout(const std::string& path, std::chrono::milliseconds timeout);

}  // namespace gcm
