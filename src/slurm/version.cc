#include "slurm/version.h"

#include "core/ascii.h"
#include "slurm/coerce.h"
#include "slurm/parse_error.h"

namespace gcm::slurm {

std::pair<int, int> parse_slurm_version(std::string_view text) {
  std::string_view s = ascii_trim(text);
  size_t sp = s.find_last_of(' ');
  std::string_view v = sp == std::string_view::npos ? s : s.substr(sp + 1);
  size_t d1 = v.find('.');
  auto major = d1 == std::string_view::npos ? std::nullopt : python_int(v.substr(0, d1));
  size_t d2 = d1 == std::string_view::npos ? d1 : v.find('.', d1 + 1);
  auto minor = d1 == std::string_view::npos ? std::nullopt : python_int(v.substr(d1 + 1, d2 - d1 - 1));
  if (!major || !minor) throw ParseError(describe_bad_value("Slurm version", text, "expected 'slurm X.Y.Z'"));
  return {static_cast<int>(*major), static_cast<int>(*minor)};
}

}  // namespace gcm::slurm
