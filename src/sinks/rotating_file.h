// An append-only JSON-lines file with size-based rotation (path, path.1, path.2, ...), safe with several writer
// processes: every append and rotation happens under an exclusive flock on `<path>.lock`, lines are written whole
// with O_APPEND, and a writer whose file was rotated away by another process reopens the new one.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

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

  // For formats with a header line (CSV). Under the same lock as append_lines, `plan` is shown the current file's
  // first line without its line end ("" for an empty file), so several writers agree on it, and answers with the
  // header the rows go under and whether a new file must be started first (the current one is rotated away; with
  // backup_count 0 that would destroy it, so it is a SinkError instead). Rows are whole records, each ending in its
  // line end (a CSV record may hold line breaks inside quotes, so rows are never split at '\n'). Size rotation
  // happens only between rows, and every file written into from an empty start begins with the header: a new
  // file, a rotated one, or one emptied by someone else.
  struct HeaderedRows {
    std::string header;  // with its line end
    std::vector<std::string> rows;
    bool start_new_file = false;
  };
  void append_under_header(const std::function<HeaderedRows(std::string_view current_header)>& plan);

  const std::string& path() const { return path_; }

 private:
  std::string first_line();
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
