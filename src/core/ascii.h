// Character classes and case of the C locale, without <cctype>'s locale lookup and its undefined behaviour for
// negative chars: the parsers of tools' output classify bytes, not letters.
#pragma once

#include <string>
#include <string_view>

namespace gcm {

inline bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
// What isspace() accepts in the C locale.
inline bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// s without the leading and trailing bytes of `set`; by default what isspace() accepts in the C locale.
inline std::string_view ascii_trim(std::string_view s, std::string_view set = " \t\n\r\f\v") {
  size_t b = s.find_first_not_of(set);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(set) - b + 1);
}

// s with A-Z turned to a-z, other bytes unchanged (what tolower() does in the C locale).
inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Bytes from outside as an error message shows them: at most `max` of them (then "..."), control bytes as '?'.
inline std::string ascii_shown(std::string_view s, size_t max = 60) {
  std::string out(s.substr(0, max));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return s.size() > max ? out + "..." : out;
}

}  // namespace gcm
