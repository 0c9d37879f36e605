#include "otlp/spool_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <climits>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "otlp/spool.h"

namespace gcm::otlp {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw SpoolError(fmt::format("spool: {} '{}': {}", what, path, std::strerror(errno)));
}

// The rule of core/private_file.h: another user who can write the file, or rename files in its directory, could
// plant entries that the agent would send under its own identity.
void require_private(const struct stat& st, const std::string& path, bool directory) {
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    throw SpoolError(fmt::format("spool: '{}' is not a {}", path, directory ? "directory" : "regular file"));
  if (st.st_uid != ::geteuid())
    throw SpoolError(fmt::format("spool: '{}' is owned by uid {}, not by this service's user (uid {})", path, st.st_uid,
                                 ::geteuid()));
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    throw SpoolError(fmt::format("spool: '{}' is writable by other users (mode {:04o})", path, st.st_mode & 07777));
}

}  // namespace

void prepare_spool_dir(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT) fail("cannot stat", dir);
    std::error_code ec;
    std::filesystem::path p(dir);
    if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) fail("cannot create", dir);
    if (::lstat(dir.c_str(), &st) != 0) fail("cannot stat", dir);
  }
  if (S_ISLNK(st.st_mode)) throw SpoolError(fmt::format("spool: '{}' is a symbolic link", dir));
  require_private(st, dir, true);
}

int open_spool_file(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == ELOOP) throw SpoolError(fmt::format("spool: '{}' is a symbolic link", path));
    fail("cannot open", path);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail("cannot stat", path);
  }
  try {
    require_private(st, path, false);
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

int lock_spool_dir(const std::string& dir) {
  std::string path = dir + "/lock";
  int fd = open_spool_file(path, O_RDWR | O_CREAT);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    if (e == EWOULDBLOCK) throw SpoolError(fmt::format("spool: '{}' is in use by another process", dir));
    fail("cannot lock", path);
  }
  return fd;
}

void fsync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("cannot open", dir);
  int rc = ::fsync(fd);
  int e = errno;
  ::close(fd);
  errno = e;
  if (rc != 0) fail("cannot fsync", dir);
}

void replace_file_durably(const std::string& dir, const std::string& name, const std::string& text) {
  std::string path = dir + "/" + name;
  std::string tmp = path + ".XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) fail("cannot create", tmp);
  bool ok = ::fchmod(fd, 0600) == 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
            ::fdatasync(fd) == 0;
  int e = errno;
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    e = ok ? errno : e;
    ::unlink(tmp.c_str());
    errno = e;
    fail("cannot write", path);
  }
  fsync_dir(dir);
}

void append_pieces(int fd, const std::string& path, std::span<const std::string_view> pieces, bool sync) {
  // writev over the pieces, as far as each call takes them: one system call for a frame in the usual case.
  std::vector<iovec> iov;
  iov.reserve(pieces.size());
  for (std::string_view p : pieces)
    if (!p.empty()) iov.push_back({const_cast<char*>(p.data()), p.size()});
  size_t first = 0;
  while (first < iov.size()) {
    int count = static_cast<int>(std::min<size_t>(iov.size() - first, IOV_MAX));
    ssize_t n = ::writev(fd, iov.data() + first, count);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write", path);
    auto left = static_cast<size_t>(n);
    while (first < iov.size() && left >= iov[first].iov_len) left -= iov[first++].iov_len;
    if (left > 0) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  if (sync && ::fdatasync(fd) != 0) fail("cannot fdatasync", path);
}

void sync_file(int fd, const std::string& path) {
  if (::fdatasync(fd) != 0) fail("cannot fdatasync", path);
}

std::string read_all(int fd, const std::string& path) {
  std::string out;
  char buf[65536];
  for (off_t at = 0;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot read", path);
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    at += n;
  }
}

void remove_files_starting(const std::string& dir, const std::string& prefix) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) fail("cannot list", dir);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d))
    if (std::string_view(e->d_name).starts_with(prefix)) names.emplace_back(e->d_name);
  ::closedir(d);
  for (const auto& n : names) ::unlink((dir + "/" + n).c_str());
}

std::string segment_name(uint64_t first_seq) { return fmt::format("seg-{:020}.log", first_seq); }

std::vector<uint64_t> list_segments(const std::string& dir) {
  std::vector<uint64_t> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) fail("cannot list", dir);
  while (dirent* e = ::readdir(d)) {
    std::string_view n(e->d_name);
    if (n.size() != 28 || !n.starts_with("seg-") || !n.ends_with(".log")) continue;
    uint64_t seq = 0;
    auto digits = n.substr(4, 20);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seq);
    if (ec == std::errc() && end == digits.data() + digits.size()) out.push_back(seq);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace gcm::otlp
