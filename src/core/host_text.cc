#include "core/host_text.h"

#include <fmt/format.h>

#include "core/json.h"

namespace gcm {

namespace {

// Copies s with control characters escaped; multi-byte UTF-8 passes through (it is valid by now).
void append_escaped_controls(std::string& out, std::string_view s, bool keep_lines) {
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    bool control = c < 0x20 || c == 0x7f;
    if (control && !(keep_lines && (c == '\n' || c == '\t')))
      out += fmt::format("\\x{:02x}", c);
    else
      out.push_back(ch);
  }
}

// The longest prefix of at most max bytes that does not end inside a UTF-8 sequence.
size_t utf8_cut(std::string_view s, size_t max) {
  if (s.size() <= max) return s.size();
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

std::string bounded(std::string_view s, size_t max_bytes, bool keep_lines) {
  // Only the part that can be shown is looked at: a 3 MB binary value costs max_bytes of work, not 12 MB of escapes.
  std::string_view shown = s.substr(0, utf8_cut(s, max_bytes));
  bool cut = shown.size() < s.size();
  std::string valid;
  if (!is_valid_utf8(shown)) {
    append_valid_utf8(valid, shown);
    shown = valid;
  }
  std::string out;
  append_escaped_controls(out, shown, keep_lines);
  if (out.size() > max_bytes) {
    out.resize(utf8_cut(out, max_bytes));
    cut = true;
  }
  if (cut) out += fmt::format("... ({} bytes)", s.size());
  return out;
}

}  // namespace

std::string host_value(std::string_view s, size_t max_bytes) { return bounded(s, max_bytes, false); }

std::string bounded_message(std::string_view s, size_t max_bytes) { return bounded(s, max_bytes, true); }

}  // namespace gcm
