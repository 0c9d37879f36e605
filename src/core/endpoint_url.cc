#include "core/endpoint_url.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/ascii.h"

namespace gcm {

namespace {}  // namespace

std::optional<std::string> http_url_problem(std::string_view url) {
  size_t sep = url.find("://");
  if (sep == std::string_view::npos) return "no scheme: expected http://HOST[:PORT]";
  std::string scheme = ascii_lower(url.substr(0, sep));
  if (scheme != "http" && scheme != "https") return fmt::format("scheme '{}' is not http or https", scheme);
  std::string_view rest = url.substr(sep + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  size_t at = authority.rfind('@');
  std::string_view host = at == std::string_view::npos ? authority : authority.substr(at + 1);
  if (host.empty() || host[0] == ':') return std::string("no host after the scheme");
  return std::nullopt;
}

std::string invalid_url_message(std::string_view what, std::string_view url, std::string_view problem) {
  return fmt::format("Invalid value for '{}': '{}' ({}; only http:// and https:// URLs are allowed)", what, url,
                     problem);
}

std::string percent_encoded(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (unsigned char c : value) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace gcm
