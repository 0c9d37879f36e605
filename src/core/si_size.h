// The reference's "integer_si" option type (--chunk-size): a plain integer, <n>k (x1000) or <n>M (x1,000,000).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string_view>

namespace gcm {

struct SiSizeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Throws SiSizeError with the reference's wording for an unknown suffix, and for a value beyond int64 (never wraps).
int64_t parse_si_size(std::string_view text);

}  // namespace gcm
