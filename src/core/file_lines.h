// Streams the lines of a file of any size in fixed memory (syslog files grow to gigabytes), with a maximum line
// length and an optional deadline, so that a hostile or odd path (/dev/zero, a FIFO, a 100 MB line) neither grows
// memory nor blocks forever.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/line_splitter.h"

namespace gcm {

struct FileReadError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct LineReadLimits {
  size_t max_line = kMaxLineBytes;  // longer lines are skipped and counted
  // Reading past it is a FileReadError: a FIFO whose writer sends nothing, a device without end.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  size_t max_bytes = SIZE_MAX;  // reading more is a FileReadError
};

struct FileLineCounts {
  size_t lines = 0;       // every line, skipped ones included
  size_t long_lines = 0;  // lines longer than max_line, not delivered
  size_t bytes = 0;       // bytes read
};

// Calls on_line for each line without its "\n" (a last line without one included). Throws FileReadError naming the
// path and the system error when the file cannot be opened or read, the deadline passed, or max_bytes were read.
FileLineCounts for_each_file_line(const std::string& path, const std::function<void(std::string_view line)>& on_line,
                                  const LineReadLimits& limits = {});

}  // namespace gcm
