#include "cli/option_limits.h"

#include <fmt/format.h>

namespace gcm {

CLI::Validator seconds_between(double min_s, const std::string& what) {
  auto check = [min_s, what](std::string& text) -> std::string {
    double v = 0;
    if (!CLI::detail::lexical_cast(text, v)) return fmt::format("'{}' is not a number of seconds", text);
    if (!(v >= min_s)) return fmt::format("{} seconds is too short: at least {}", text, what);
    if (v > kMaxOptionSeconds)
      return fmt::format("{} seconds is too long: at most 366 days ({} s)", text,
                         static_cast<int64_t>(kMaxOptionSeconds));
    return "";
  };
  return CLI::Validator(check, "");
}

CLI::Validator mebibytes_at_most_a_tebibyte() {
  auto check = [](std::string& text) -> std::string {
    double v = 0;
    if (!CLI::detail::lexical_cast(text, v)) return fmt::format("'{}' is not a number of MiB", text);
    if (!(v <= kMaxOptionMebibytes))
      return fmt::format("{} MiB is too large: at most {} MiB (1 TiB)", text,
                         static_cast<int64_t>(kMaxOptionMebibytes));
    return "";
  };
  return CLI::Validator(check, "");
}

}  // namespace gcm
