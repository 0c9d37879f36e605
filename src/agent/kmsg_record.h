// One record of the kernel's /dev/kmsg interface (Documentation/ABI/testing/dev-kmsg):
//   "<prio>,<seq>,<ts_usec>,<flag>[,<more>...];<message>\n"
// followed by zero or more dictionary lines " KEY=value\n" (" SUBSYSTEM=pci", " DEVICE=+pci:0000:3b:00.0").
// Hand-written and allocation-light: the agent parses every record of the ring at start and each new one after.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gcm::agent {

struct KmsgDictEntry {
  std::string_view key, value;
};

// Views into the text given to parse_kmsg_record: valid as long as that text is.
struct KmsgRecord {
  int facility = 0;  // prio >> 3 (0 kern, 1 user, 3 daemon, ...)
  int level = 0;     // prio & 7 (0 emerg .. 7 debug)
  uint64_t seq = 0;
  uint64_t ts_usec = 0;      // microseconds since boot (the kernel's local clock)
  char flag = '-';           // '-' a whole record, 'c' the start of a continued line, '+' a fragment (old kernels)
  std::string_view message;  // without the "\n"; the kernel escapes non-printable bytes as \xNN
  std::vector<KmsgDictEntry> dict;

  bool continuation() const { return flag == 'c' || flag == '+'; }
  // The value of a dictionary key, or nullopt.
  std::optional<std::string_view> dict_value(std::string_view key) const;
};

// Parses one record (header line plus dictionary lines, the last "\n" optional). On a bad record returns nullopt
// and, when `error` is given, says what was expected where ("expected digits (the sequence number) before ','").
std::optional<KmsgRecord> parse_kmsg_record(std::string_view text, std::string* error = nullptr);

}  // namespace gcm::agent
