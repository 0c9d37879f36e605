// Parsing JSON that comes from outside the process (HTTP bodies, tool output, files on the host) with a bound on how
// deeply arrays and objects nest.
//
// nlohmann::json builds, copies, dumps and compares values recursively: 100 000 nested '[' (200 KB, or a 178-byte
// gzip in an OTLP/JSON body) overflow the stack. The nesting is therefore measured by a pre-pass over the text, which
// needs constant memory and no recursion, and too deep a document is refused before any DOM exists. Every place that
// parses JSON from outside goes through parse_json_limited or parse_json_limited_or_throw.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gcm {

// The deepest nesting accepted by default. The deepest legitimate input of the project is OTLP/JSON with attribute
// values that are lists of key/value lists (about 12 levels); protobuf's own JSON reader stops at 100. 128 leaves room
// for any real document while keeping the recursion of nlohmann::json (a few hundred bytes of stack a level) far
// below any thread's stack.
inline constexpr size_t kJsonMaxDepth = 128;

struct JsonLimits {
  size_t max_depth = kJsonMaxDepth;
  // Accept // and /* */ comments (nlohmann's ignore_comments); the pre-pass then skips brackets inside comments.
  bool ignore_comments = false;
};

// Thrown by parse_json_limited_or_throw: a syntax error (nlohmann's message) or nesting deeper than the limit.
struct JsonInputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// nullopt when no array or object of text nests deeper than limits.max_depth; otherwise the error, naming the limit
// and the byte offset where it was passed, e.g. "JSON nested deeper than 128 levels (at byte 128)". The text is not
// otherwise validated: strings and their escapes are respected, everything else is left to the parser.
std::optional<std::string> json_depth_error(std::string_view text, const JsonLimits& limits = {});

// Parses text. On a syntax error or too deep nesting it returns a discarded value (is_discarded()) and, when error is
// given, stores why there. Never throws.
nlohmann::json parse_json_limited(std::string_view text, std::string* error = nullptr, const JsonLimits& limits = {});

// As parse_json_limited, but throws JsonInputError with the reason.
nlohmann::json parse_json_limited_or_throw(std::string_view text, const JsonLimits& limits = {});

}  // namespace gcm
