#include "core/si_size.h"

#include <charconv>
#include <limits>
#include <string>

#include <fmt/format.h>

namespace gcm {

int64_t parse_si_size(std::string_view text) {
  if (text.empty()) throw SiSizeError("expected an integer with an optional k or M suffix, got ''");
  int64_t multiplier = 1;
  std::string_view digits = text;
  char last = text.back();
  if (last < '0' || last > '9') {
    if (last == 'k')
      multiplier = 1000;
    else if (last == 'M')
      multiplier = 1000000;
    else
      throw SiSizeError(fmt::format("Unrecognized SI symbol '{}'. Allowed symbols are: k, M", last));
    digits.remove_suffix(1);
  }
  int64_t n = 0;
  auto res = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || res.ec != std::errc() || res.ptr != digits.data() + digits.size() || n < 0)
    throw SiSizeError(fmt::format("'{}' is not a non-negative integer with an optional k or M suffix", text));
  // Checked before multiplying: 18446744073710M once wrapped to 448 KB.
  if (n > std::numeric_limits<int64_t>::max() / multiplier)
    throw SiSizeError(fmt::format("'{}' is too large (at most {} bytes)", text, std::numeric_limits<int64_t>::max()));
  return n * multiplier;
}

}  // namespace gcm
