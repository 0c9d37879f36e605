#include "cli/detach.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace gcm {

void detach() {
  if (pid_t p = ::fork(); p < 0) {
    throw std::runtime_error(fmt::format("fork failed: {}", std::strerror(errno)));
  } else if (p > 0) {
    ::_exit(0);
  }
  ::setsid();
  if (pid_t p = ::fork(); p > 0) ::_exit(0);
  int fd = ::open("/dev/null", O_RDWR);
  if (fd >= 0) {
    ::dup2(fd, 0);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    if (fd > 2) ::close(fd);
  }
}

}  // namespace gcm
