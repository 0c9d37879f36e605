// The one rule for every URL the tools send data to (the otel sink's endpoints, slurm_processor --downstream):
// http:// or https:// with a host. libcurl would otherwise follow file://, gopher://, ftp://, dict://, ...: a
// mistyped or hostile option could read a local file into an error message or talk to any service.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gcm {

// Why `url` is refused ("the scheme must be http or https", "no host after the scheme"), or nullopt when it is a
// usable http(s) URL. The scheme is matched without regard to case, as URLs are.
std::optional<std::string> http_url_problem(std::string_view url);

// The message for a refused URL: "Invalid value for '<what>': '<url>' (<problem>; only http:// and https:// URLs
// are allowed)".
std::string invalid_url_message(std::string_view what, std::string_view url, std::string_view problem);

// `value` as one query-string value (RFC 3986): every byte other than A-Z a-z 0-9 - . _ ~ as %XX, so that a name
// from a peer or an option cannot add a parameter or a path to the URL it is put in.
std::string percent_encoded(std::string_view value);

}  // namespace gcm
