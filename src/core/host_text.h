// Text read from the host (sysfs and procfs values, tool output, file names) on its way into a verdict, a log line or
// a record: valid UTF-8, no control characters that would break a line or a terminal, and a bounded length. A sysfs
// attribute can be binary and megabytes long (a PCI ROM, a config space); protobuf strings must be UTF-8.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gcm {

// The longest value of the host quoted in a message: a sysfs attribute is one page (4096 bytes) at most; the
// values quoted in messages (a link speed, an interface name, a model) are tens of bytes.
inline constexpr size_t kMaxHostValueBytes = 256;
// The longest verdict message: many findings, each a line.
inline constexpr size_t kMaxMessageBytes = 64u << 10;

// s with invalid UTF-8 sequences replaced by U+FFFD, control characters (tab and newline included) written as
// "\xNN", and cut after max_bytes with "... (N bytes)" naming the original length.
std::string host_value(std::string_view s, size_t max_bytes = kMaxHostValueBytes);

// A message built from host values: as host_value but newlines and tabs are kept (messages are multi-line).
std::string bounded_message(std::string_view s, size_t max_bytes = kMaxMessageBytes);

}  // namespace gcm
