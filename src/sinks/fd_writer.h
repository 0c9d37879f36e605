// A buffered writer on a file descriptor that reports write errors (EPIPE, ENOSPC) instead of ignoring them.
#pragma once

#include <string>
#include <string_view>

namespace gcm {

class FdWriter {
 public:
  explicit FdWriter(int fd, size_t buffer_size = 1u << 16) : fd_(fd), limit_(buffer_size) { buf_.reserve(limit_); }
  ~FdWriter();
  std::string& buffer() { return buf_; }
  // Writes the buffer out once it is larger than the limit.
  void maybe_flush() {
    if (buf_.size() >= limit_) flush();
  }
  void flush();  // throws SinkError on a write error

 private:
  int fd_;
  size_t limit_;
  std::string buf_;
};

}  // namespace gcm
