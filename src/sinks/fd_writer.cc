#include "sinks/fd_writer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "sinks/sink.h"

namespace gcm {

FdWriter::~FdWriter() {
  try {
    flush();
  } catch (...) {
  }
}

void FdWriter::flush() {
  size_t off = 0;
  while (off < buf_.size()) {
    ssize_t n = ::write(fd_, buf_.data() + off, buf_.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      buf_.clear();
      throw SinkError(fmt::format("write to fd {} failed: {}", fd_, std::strerror(e)));
    }
    off += static_cast<size_t>(n);
  }
  buf_.clear();
}

}  // namespace gcm
