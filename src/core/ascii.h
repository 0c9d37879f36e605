// Character classes of the C locale, without <cctype>'s locale lookup and its undefined behaviour for negative chars:
// the parsers of Slurm's output classify bytes, not letters.
#pragma once

namespace gcm {

inline bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
// What isspace() accepts in the C locale.
inline bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

}  // namespace gcm
