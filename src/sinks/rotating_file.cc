#include "sinks/rotating_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "sinks/sink.h"

namespace gcm {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw SinkError(fmt::format("{} '{}': {}", what, path, std::strerror(errno)));
}

class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) throw SinkError(fmt::format("flock failed: {}", std::strerror(errno)));
    }
  }
  ~FileLock() { ::flock(fd_, LOCK_UN); }

 private:
  int fd_;
};

}  // namespace

RotatingFile::RotatingFile(std::string path, uint64_t max_bytes, int backup_count)
    : path_(std::move(path)), max_bytes_(max_bytes), backup_count_(backup_count) {
  std::filesystem::path p(path_);
  if (p.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) throw SinkError(fmt::format("cannot create the directory of '{}': {}", path_, ec.message()));
  }
  lock_fd_ = ::open((path_ + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) fail("cannot open the lock file of", path_);
  open_current();
}

RotatingFile::~RotatingFile() {
  if (fd_ >= 0) ::close(fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void RotatingFile::open_current() {
  if (fd_ >= 0) ::close(fd_);
  // Read-write: a CSV writer reads the file's header back (first_line) under the lock; writes still only append.
  fd_ = ::open(path_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("cannot open", path_);
  struct stat st;
  if (::fstat(fd_, &st) != 0) fail("cannot stat", path_);
  inode_ = st.st_ino;
}

void RotatingFile::reopen_if_rotated() {
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0 || st.st_ino != inode_) open_current();
}

void RotatingFile::rotate() {
  if (backup_count_ > 0) {
    for (int i = backup_count_ - 1; i >= 1; --i) {
      std::string from = fmt::format("{}.{}", path_, i), to = fmt::format("{}.{}", path_, i + 1);
      if (::access(from.c_str(), F_OK) == 0 && ::rename(from.c_str(), to.c_str()) != 0) fail("cannot rotate", from);
    }
    if (::rename(path_.c_str(), (path_ + ".1").c_str()) != 0) fail("cannot rotate", path_);
  } else {
    if (::truncate(path_.c_str(), 0) != 0) fail("cannot truncate", path_);
  }
  open_current();
}

void RotatingFile::write_all(std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write to", path_);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

void RotatingFile::append_lines(std::string_view lines) {
  FileLock lock(lock_fd_);
  reopen_if_rotated();
  struct stat st;
  if (::fstat(fd_, &st) != 0) fail("cannot stat", path_);
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (max_bytes_ == 0) {
    write_all(lines);
    return;
  }
  // Write in runs of lines that fit; rotate between lines when the next one would pass max_bytes.
  size_t run_start = 0, pos = 0;
  while (pos < lines.size()) {
    size_t nl = lines.find('\n', pos);
    size_t end = nl == std::string_view::npos ? lines.size() : nl + 1;
    uint64_t len = end - pos;
    if (size > 0 && size + len > max_bytes_) {
      write_all(lines.substr(run_start, pos - run_start));
      rotate();
      size = 0;
      run_start = pos;
    }
    size += len;
    pos = end;
  }
  write_all(lines.substr(run_start));
}

std::string RotatingFile::first_line() {
  // A header longer than this is treated as unreadable: the plan then starts a new file rather than guess.
  constexpr size_t kMaxHeader = 1u << 20;
  std::string buf;
  size_t chunk = 4096;
  while (buf.size() < kMaxHeader) {
    size_t old = buf.size();
    buf.resize(old + chunk);
    ssize_t n;
    do {
      n = ::pread(fd_, buf.data() + old, chunk, static_cast<off_t>(old));
    } while (n < 0 && errno == EINTR);
    if (n < 0) fail("cannot read", path_);
    buf.resize(old + static_cast<size_t>(n));
    size_t nl = buf.find('\n', old);
    if (nl != std::string::npos) {
      buf.resize(nl);
      break;
    }
    if (n == 0) break;  // the file ends without a line end
    chunk = std::min(chunk * 2, kMaxHeader);
  }
  if (!buf.empty() && buf.back() == '\r') buf.pop_back();
  return buf;
}

void RotatingFile::append_under_header(const std::function<HeaderedRows(std::string_view)>& plan) {
  FileLock lock(lock_fd_);
  reopen_if_rotated();
  struct stat st;
  if (::fstat(fd_, &st) != 0) fail("cannot stat", path_);
  uint64_t size = static_cast<uint64_t>(st.st_size);
  HeaderedRows h = plan(size == 0 ? std::string() : first_line());
  if (h.start_new_file && size > 0) {
    if (backup_count_ == 0) {
      throw SinkError(
          fmt::format("'{}' must start a new file for a different header, but backup_count=0 would "
                      "destroy the current one",
                      path_));
    }
    rotate();
    size = 0;
  }
  std::string out;
  for (const auto& row : h.rows) {
    if (size == 0) {
      out += h.header;
      size += h.header.size();
    } else if (max_bytes_ > 0 && size > h.header.size() && size + row.size() > max_bytes_) {
      // (a file holding only the header takes the row, however large: rotating it would leave a file of no rows)
      write_all(out);
      out.clear();
      rotate();
      out += h.header;
      size = h.header.size();
    }
    out += row;
    size += row.size();
  }
  write_all(out);
}

}  // namespace gcm
