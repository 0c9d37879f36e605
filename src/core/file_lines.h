// Streams the lines of a file of any size in fixed memory (syslog files grow to gigabytes).
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gcm {

struct FileReadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Calls on_line for each line without its "\n" (a last line without one included). Throws FileReadError naming the
// path and the system error when the file cannot be opened or read. Returns the number of lines.
size_t for_each_file_line(const std::string& path, const std::function<void(std::string_view line)>& on_line);

}  // namespace gcm
