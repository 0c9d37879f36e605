#include "attribution/gpu_list.h"

#include <algorithm>
#include <charconv>

namespace gcm {
namespace {

bool parse_uint(std::string_view s, unsigned* out) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::vector<unsigned> parse_gpu_index_list(std::string_view list) {
  std::vector<unsigned> out;
  auto add = [&](unsigned v) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  };
  size_t i = 0;
  while (i <= list.size()) {
    size_t j = list.find(',', i);
    if (j == std::string_view::npos) j = list.size();
    std::string_view item = list.substr(i, j - i);
    unsigned a = 0, b = 0;
    if (size_t dash = item.find('-'); dash != std::string_view::npos) {
      // A range; at most 4096 entries, so a corrupt "0-4000000000" cannot exhaust memory.
      if (parse_uint(item.substr(0, dash), &a) && parse_uint(item.substr(dash + 1), &b) && a <= b && b - a < 4096)
        for (unsigned v = a; v <= b; ++v) add(v);
    } else if (parse_uint(item, &a)) {
      add(a);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace gcm
