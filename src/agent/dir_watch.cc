#include "agent/dir_watch.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>

namespace gcm::agent {

DirWatch::DirWatch(std::string dir) : dir_(std::move(dir)) {
  if (!dir_.empty()) fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
}

DirWatch::~DirWatch() {
  if (fd_ >= 0) ::close(fd_);
}

bool DirWatch::changed() {
  if (fd_ < 0) return false;
  bool any = false;
  if (wd_ < 0) {
    wd_ = ::inotify_add_watch(fd_, dir_.c_str(),
                              IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_DELETE_SELF |
                                  IN_MOVE_SELF | IN_ONLYDIR);
    if (wd_ < 0) return false;
    any = true;  // it appeared: whatever is in it is new to us
  }
  alignas(inotify_event) char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t off = 0; off < n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf + off);
      any = true;
      // The directory itself went away (or was replaced): watch it again when it is back.
      if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
        if (!(ev->mask & IN_IGNORED)) ::inotify_rm_watch(fd_, wd_);
        wd_ = -1;
      }
      off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
    }
  }
  return any;
}

}  // namespace gcm::agent
