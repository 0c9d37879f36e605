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

// The factor of a memory unit suffix relative to base (1 for the unit below K), or 0 when it is not one.
double unit_factor(char unit, double base) {
  switch (unit) {
    case 'P':
      return base * 1e12;
    case 'T':
      return base * 1e9;
    case 'G':
      return base * 1e6;
    case 'M':
      return base * 1e3;
    case 'K':
      return base;
    default:
      return 0;
  }
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
  double scale = unit_factor(unit, 1e-3);
  if (scale == 0) throw ParseError(describe_bad_value("memory size", value, "unknown unit; expected K, M, G, T or P"));
  auto number = python_float(value.substr(0, value.size() - 1));
  if (!number) throw ParseError(describe_bad_value("memory size", value, "not a number before the unit"));
  return truncate_to_int64(*number * scale, value);
}

std::optional<int64_t> memory_to_bytes(std::string_view value) {
  if (value.empty() || value == "N/A" || value == "(null)") return std::nullopt;
  char unit = value.back();
  if (unit >= '0' && unit <= '9') {
    auto megabytes = python_int(value);
    if (!megabytes) throw ParseError(describe_bad_value("memory size", value, "not a whole number of megabytes"));
    return truncate_to_int64(static_cast<double>(*megabytes) * 1e6, value);
  }
  double scale = unit_factor(unit, 1e3);
  if (scale == 0) throw ParseError(describe_bad_value("memory size", value, "unknown unit; expected K, M, G, T or P"));
  auto number = python_float(value.substr(0, value.size() - 1));
  if (!number) throw ParseError(describe_bad_value("memory size", value, "not a number before the unit"));
  return truncate_to_int64(*number * scale, value);
}

}  // namespace gcm::slurm
