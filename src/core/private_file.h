// Files a service keeps for itself (caches) that another local user must not be able to plant, swap or read: a
// file is trusted only when it is a regular file (not a symlink) owned by the service's user and writable by no one
// else, in a directory that no one else can rename files in. Written through a fresh temporary file in the same
// directory and renamed over the old one, so that a planted symlink is never followed and a reader never sees half.
#pragma once

#include <optional>
#include <string>

namespace gcm {

// Why `path` cannot be trusted (a sentence naming it), or nullopt when it can or does not exist yet.
std::optional<std::string> untrusted_file_reason(const std::string& path);

// The content of `path` if it exists and can be trusted (checked on the opened file, so it cannot be swapped in
// between); nullopt otherwise, with the reason in *why when it exists but cannot be trusted.
std::optional<std::string> read_private_file(const std::string& path, std::string* why = nullptr);

// Replaces `path` with `text` (mode 0600), creating its directory (0700) when missing; false when it cannot.
bool write_private_file(const std::string& path, const std::string& text);

}  // namespace gcm
