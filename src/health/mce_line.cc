#include "health/mce_line.h"

namespace gcm::health {

namespace {

constexpr uint64_t kStatusUc = uint64_t{1} << 61;   // the error was not corrected
constexpr uint64_t kStatusPcc = uint64_t{1} << 57;  // the processor's context is corrupt: it cannot go on

// Reads decimal digits at the start of s (at most 9: a CPU or bank number), removing them.
std::optional<int> take_decimal(std::string_view& s) {
  size_t n = 0;
  int v = 0;
  while (n < s.size() && n < 9 && s[n] >= '0' && s[n] <= '9') v = v * 10 + (s[n++] - '0');
  if (n == 0) return std::nullopt;
  s.remove_prefix(n);
  return v;
}

// Reads 1 to 16 hex digits at the start of s, removing them.
std::optional<uint64_t> take_hex(std::string_view& s) {
  size_t n = 0;
  uint64_t v = 0;
  for (; n < s.size() && n < 16; ++n) {
    char c = s[n];
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) break;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  if (n == 0) return std::nullopt;
  s.remove_prefix(n);
  return v;
}

// The CPU of "CPU 3:" or "CPU12:" in the text before `end`.
std::optional<int> cpu_before(std::string_view line, size_t end) {
  size_t p = line.substr(0, end).rfind("CPU");
  if (p == std::string_view::npos) return std::nullopt;
  std::string_view s = line.substr(p + 3);
  if (!s.empty() && s[0] == ' ') s.remove_prefix(1);
  return take_decimal(s);
}

// "Machine Check[ Exception]: <mcgstatus> Bank <n>: <status>" from after "Machine Check".
std::optional<MceLine> parse_bank(std::string_view line, size_t at) {
  std::string_view s = line.substr(at + 13);
  if (s.starts_with(" Exception")) s.remove_prefix(10);
  if (!s.starts_with(": ")) return std::nullopt;
  s.remove_prefix(2);
  if (!take_hex(s) || !s.starts_with(" Bank ")) return std::nullopt;
  s.remove_prefix(6);
  MceLine m;
  m.bank = take_decimal(s);
  if (!m.bank || !s.starts_with(": ")) return std::nullopt;
  s.remove_prefix(2);
  m.status = take_hex(s);
  if (!m.status) return std::nullopt;
  m.cls = mce_status_class(*m.status);
  m.cpu = cpu_before(line, at);
  return m;
}

}  // namespace

const char* to_string(MceClass c) {
  switch (c) {
    case MceClass::Corrected:
      return "corrected";
    case MceClass::Uncorrected:
      return "uncorrected";
    case MceClass::Fatal:
      return "fatal";
    case MceClass::Logged:
      return "logged";
    case MceClass::Thermal:
      return "thermal";
  }
  return "corrected";
}

MceClass mce_status_class(uint64_t status) {
  if (status & kStatusPcc) return MceClass::Fatal;
  if (status & kStatusUc) return MceClass::Uncorrected;
  return MceClass::Corrected;
}

std::optional<MceLine> parse_mce_line(std::string_view line) {
  // Capital C: the kernel's bank line; "Machine check events logged" has a small one.
  if (size_t at = line.find("Machine Check"); at != std::string_view::npos) return parse_bank(line, at);
  if (line.find("Machine check events logged") != std::string_view::npos) return MceLine{MceClass::Logged, {}, {}, {}};
  if (line.find("CMCI storm detected") != std::string_view::npos) return MceLine{MceClass::Corrected, {}, {}, {}};
  size_t t = line.find("temperature");
  if (t != std::string_view::npos && line.find("above threshold", t) != std::string_view::npos &&
      line.find("throttled", t) != std::string_view::npos) {
    MceLine m;
    m.cls = MceClass::Thermal;
    m.cpu = cpu_before(line, t);
    return m;
  }
  return std::nullopt;
}

}  // namespace gcm::health
