// /proc/<pid>/mountinfo lines (the reference's MountInfo), with the kernel's octal escapes (\040 for a space)
// decoded.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gcm {

struct MountInfo {
  std::string mount_id, parent_id, device_id, root, mount_point;
  std::vector<std::string> mount_options, optional_fields;
  std::string filesystem_type, mount_source;
  std::vector<std::string> super_options;
};

struct MountInfoError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses one line; throws MountInfoError saying what was expected.
MountInfo parse_mountinfo_line(std::string_view line);
// Parses a whole file's text; errors name the source and the line number.
std::vector<MountInfo> parse_mountinfo(std::string_view text, const std::string& source);
// Decodes \ooo octal escapes.
std::string unescape_octal(std::string_view s);

}  // namespace gcm
