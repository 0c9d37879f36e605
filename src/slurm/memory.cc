#include "slurm/memory.h"

#include <cmath>

#include "slurm/coerce.h"

namespace gcm::slurm {

namespace {

int64_t truncate_to_int64(double v, std::string_view value) {
  // 2^63 is exactly representable; anything at or beyond it (or nan) does not fit.
  if (!(std::fabs(v) < 9223372036854775808.0))
    throw ParseError(describe_bad_value("memory size", value, "out of range"));
  return static_cast<int64_t>(v);  // truncates toward zero, as Python's int(float) does
}

}  // namespace

int64_t convert_memory_to_mb(std::string_view value) {
  if (value.empty() || value == "0") return 0;
  char unit = value.back();
  if (unit >= '0' && unit <= '9') {
    auto bytes = python_int(value);
    if (!bytes) throw ParseError(describe_bad_value("memory size", value, "not a whole number of bytes"));
    return truncate_to_int64(static_cast<double>(*bytes) * 1e-6, value);
  }
  double scale = 0;
  switch (unit) {
    case 'P':
      scale = 1e9;
      break;
    case 'T':
      scale = 1e6;
      break;
    case 'G':
      scale = 1e3;
      break;
    case 'M':
      scale = 1;
      break;
    case 'K':
      scale = 1e-3;
      break;
    default:
      throw ParseError(describe_bad_value("memory size", value, "unknown unit; expected K, M, G, T or P"));
  }
  auto number = python_float(value.substr(0, value.size() - 1));
  if (!number) throw ParseError(describe_bad_value("memory size", value, "not a number before the unit"));
  return truncate_to_int64(*number * scale, value);
}

}  // namespace gcm::slurm
