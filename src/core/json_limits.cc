#include "core/json_limits.h"

// No fmt here: the fake NVML (tests/fake_nvml) compiles this file and links nothing but nlohmann_json.

namespace gcm {

namespace {

// The scanner's position inside the text: what a byte means depends on whether it is inside a string or comment.
enum class Lexical { Value, String, StringEscape, LineComment, BlockComment };

// The state after a '/' outside strings when comments are allowed: "//" and "/*" open a comment.
Lexical after_slash(std::string_view text, size_t& i) {
  if (i + 1 >= text.size()) return Lexical::Value;
  if (text[i + 1] == '/') {
    ++i;
    return Lexical::LineComment;
  }
  if (text[i + 1] == '*') {
    ++i;
    return Lexical::BlockComment;
  }
  return Lexical::Value;
}

}  // namespace

std::optional<std::string> json_depth_error(std::string_view text, const JsonLimits& limits) {
  size_t depth = 0;
  Lexical state = Lexical::Value;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    switch (state) {
      case Lexical::String:
        if (c == '\\')
          state = Lexical::StringEscape;
        else if (c == '"')
          state = Lexical::Value;
        break;
      case Lexical::StringEscape:
        state = Lexical::String;  // the escaped byte cannot end the string (\" and \\)
        break;
      case Lexical::LineComment:
        // nlohmann's lexer ends a line comment at a line break or a NUL byte (found by json_limits_fuzz).
        if (c == '\n' || c == '\r' || c == '\0') state = Lexical::Value;
        break;
      case Lexical::BlockComment:
        if (c == '*' && i + 1 < text.size() && text[i + 1] == '/') {
          ++i;
          state = Lexical::Value;
        }
        break;
      case Lexical::Value:
        if (c == '"') {
          state = Lexical::String;
        } else if (c == '[' || c == '{') {
          if (++depth > limits.max_depth)
            return "JSON nested deeper than " + std::to_string(limits.max_depth) + " levels (at byte " +
                   std::to_string(i) + ")";
        } else if (c == ']' || c == '}') {
          if (depth > 0) --depth;  // an unbalanced closer is the parser's syntax error to report
        } else if (c == '/' && limits.ignore_comments) {
          state = after_slash(text, i);
        }
        break;
    }
  }
  return std::nullopt;
}

nlohmann::json parse_json_limited(std::string_view text, std::string* error, const JsonLimits& limits) {
  nlohmann::json discarded(nlohmann::json::value_t::discarded);
  if (auto deep = json_depth_error(text, limits)) {
    if (error) *error = *deep;
    return discarded;
  }
  if (!error) return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false, limits.ignore_comments);
  try {
    return nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/true, limits.ignore_comments);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number too large
    *error = e.what();
    return discarded;
  }
}

nlohmann::json parse_json_limited_or_throw(std::string_view text, const JsonLimits& limits) {
  std::string error;
  auto j = parse_json_limited(text, &error, limits);
  if (j.is_discarded()) throw JsonInputError(error);
  return j;
}

}  // namespace gcm
