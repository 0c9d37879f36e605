// The file-system side of the spool: a directory trusted as core/private_file.h trusts files (owned by this user,
// writable by no one else, no symlinks), files opened 0600 without following links, an exclusive lock, and
// replacement of a small file that survives a power cut (temporary file, fdatasync, rename, fsync of the directory).
// Every failure is a SpoolError naming the path.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gcm::otlp {

// Creates `dir` (0700; parents as needed) when missing; refuses a symlink, a non-directory, a directory owned by
// another user or writable by group or others.
void prepare_spool_dir(const std::string& dir);
// Opens (flags as open(2), O_NOFOLLOW and O_CLOEXEC added, mode 0600 when created) and refuses a file that is not
// regular, is owned by another user or is writable by group or others.
int open_spool_file(const std::string& path, int flags);
// Takes `dir`/lock with flock(LOCK_EX | LOCK_NB); the returned fd holds it until closed.
int lock_spool_dir(const std::string& dir);
void replace_file_durably(const std::string& dir, const std::string& name, const std::string& text);
void fsync_dir(const std::string& dir);
// Writes all of `pieces`, one after the other, at the end of fd (retrying short writes), and fdatasyncs when `sync`.
void append_pieces(int fd, const std::string& path, std::span<const std::string_view> pieces, bool sync);
void sync_file(int fd, const std::string& path);
// The whole content of an open file.
std::string read_all(int fd, const std::string& path);

// Unlinks the files of `dir` whose names start with `prefix`.
void remove_files_starting(const std::string& dir, const std::string& prefix);

std::string segment_name(uint64_t first_seq);
// First sequence numbers of the segments in `dir`, ascending; other names are ignored.
std::vector<uint64_t> list_segments(const std::string& dir);

}  // namespace gcm::otlp
