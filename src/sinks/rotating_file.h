// An append-only JSON-lines file with size-based rotation (path, path.1, path.2, ...), safe with several writer
// processes: every append and rotation happens under an exclusive flock on `<path>.lock`, lines are written whole
// with O_APPEND, and a writer whose file was rotated away by another process reopens the new one.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

namespace gcm {

class RotatingFile {
 public:
  // max_bytes 0 disables rotation; backup_count 0 with rotation truncates (as Python's RotatingFileHandler).
  RotatingFile(std::string path, uint64_t max_bytes, int backup_count);
  ~RotatingFile();
  RotatingFile(const RotatingFile&) = delete;
  RotatingFile& operator=(const RotatingFile&) = delete;

  // Appends complete lines (each ending in '\n'). Rotation happens only between lines. Throws SinkError.
  void append_lines(std::string_view lines);
  const std::string& path() const { return path_; }

 private:
  void open_current();
  void reopen_if_rotated();
  void rotate();
  void write_all(std::string_view data);

  std::string path_;
  uint64_t max_bytes_;
  int backup_count_;
  int fd_ = -1;
  int lock_fd_ = -1;
  ino_t inode_ = 0;
};

}  // namespace gcm
