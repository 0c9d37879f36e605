#include "core/private_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace gcm {

namespace {

std::string parent_of(const std::string& path) {
  std::filesystem::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

std::optional<std::string> untrusted_stat(const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return fmt::format("'{}' is not a regular file", path);
  if (st.st_uid != ::geteuid())
    return fmt::format("'{}' is owned by uid {}, not by this service's user (uid {})", path, st.st_uid, ::geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return fmt::format("'{}' is writable by other users (mode {:04o})", path, st.st_mode & 07777);
  return std::nullopt;
}

// Another user who may create and rename files in the directory could swap the file after it was checked.
std::optional<std::string> untrusted_directory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return std::nullopt;
  bool others_write = st.st_mode & (S_IWGRP | S_IWOTH);
  bool sticky = st.st_mode & S_ISVTX;
  if (others_write && !sticky) return fmt::format("its directory '{}' is writable by other users", dir);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> untrusted_file_reason(const std::string& path) {
  if (auto d = untrusted_directory(parent_of(path))) return fmt::format("'{}': {}", path, *d);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  if (S_ISLNK(st.st_mode)) return fmt::format("'{}' is a symbolic link", path);
  return untrusted_stat(path, st);
}

std::optional<std::string> read_private_file(const std::string& path, std::string* why) {
  if (auto d = untrusted_directory(parent_of(path))) {
    if (why) *why = fmt::format("'{}': {}", path, *d);
    return std::nullopt;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (why && errno == ELOOP) *why = fmt::format("'{}' is a symbolic link", path);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return std::nullopt;
  }
  if (auto bad = untrusted_stat(path, st)) {
    ::close(fd);
    if (why) *why = *bad;
    return std::nullopt;
  }
  std::string text;
  char buf[65536];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  if (n < 0) return std::nullopt;
  return text;
}

bool write_private_file(const std::string& path, const std::string& text) {
  std::string dir = parent_of(path);
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    ::chmod(dir.c_str(), 0700);
  }
  if (untrusted_directory(dir)) return false;
  std::string tmp = path + ".XXXXXX";
  int fd = ::mkstemp(tmp.data());  // a fresh name, O_EXCL: a symlink planted under a predictable name is not followed
  if (fd < 0) return false;
  ::fchmod(fd, 0600);
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ok = ::close(fd) == 0 && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace gcm
