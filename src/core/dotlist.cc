#include "core/dotlist.h"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/ascii.h"

namespace gcm {

namespace {

// YAML's white space is the blank and the tab only (s-white); a line break inside a value is the value's.
std::string_view trim_white(std::string_view s) { return ascii_trim(s, " \t"); }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

// Types a plain (unquoted) scalar the way YAML's core schema does.
Value type_scalar(std::string_view s) {
  s = trim_white(s);
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return Value();
  if (iequals(s, "true")) return Value(true);
  if (iequals(s, "false")) return Value(false);
  {
    int64_t i;
    std::string_view digits = s;
    if (!digits.empty() && digits[0] == '+') digits.remove_prefix(1);
    auto res = std::from_chars(digits.data(), digits.data() + digits.size(), i);
    if (res.ec == std::errc() && res.ptr == digits.data() + digits.size()) return Value(i);
  }
  if (s == ".inf" || s == "+.inf" || s == ".Inf") return Value(std::numeric_limits<double>::infinity());
  if (s == "-.inf" || s == "-.Inf") return Value(-std::numeric_limits<double>::infinity());
  if (s == ".nan" || s == ".NaN") return Value(std::nan(""));
  {
    // A float needs a digit and a '.' or an exponent; "1.2.3" or "1e" stay strings.
    bool has_digit = false, has_marker = false;
    for (char c : s) {
      if (c >= '0' && c <= '9') has_digit = true;
      if (c == '.' || c == 'e' || c == 'E') has_marker = true;
    }
    if (has_digit && has_marker) {
      double d;
      std::string_view digits = s;
      if (digits[0] == '+') digits.remove_prefix(1);
      auto res = std::from_chars(digits.data(), digits.data() + digits.size(), d);
      if (res.ec == std::errc() && res.ptr == digits.data() + digits.size()) return Value(d);
    }
  }
  return Value(std::string(s));
}

class FlowParser {
 public:
  explicit FlowParser(std::string_view text) : s_(text) {}

  Value parse_top() {
    skip_ws();
    if (pos_ < s_.size() && (s_[pos_] == '[' || s_[pos_] == '{' || s_[pos_] == '\'' || s_[pos_] == '"')) {
      Value v = parse_value(/*in_flow=*/false);
      skip_ws();
      if (pos_ != s_.size()) fail("unexpected text after the value");
      return v;
    }
    return type_scalar(s_);
  }

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw DotlistError(fmt::format("{} at position {} of '{}'", what, pos_ + 1, s_));
  }

  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }

  Value parse_value(bool in_flow) {
    skip_ws();
    if (pos_ >= s_.size()) fail("expected a value");
    char c = s_[pos_];
    if (c == '[') return parse_list();
    if (c == '{') return parse_dict();
    if (c == '\'' || c == '"') return Value(parse_quoted());
    return parse_plain(in_flow);
  }

  std::string parse_quoted() {
    char q = s_[pos_++];
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail("unterminated quoted string");
      char c = s_[pos_++];
      if (c == q) {
        if (q == '\'' && pos_ < s_.size() && s_[pos_] == '\'') {  // '' is a literal quote in YAML
          out.push_back('\'');
          ++pos_;
          continue;
        }
        return out;
      }
      if (q == '"' && c == '\\') {
        if (pos_ >= s_.size()) fail("unterminated escape");
        char e = s_[pos_++];
        switch (e) {
          case 'n':
            out.push_back('\n');
            break;
          case 't':
            out.push_back('\t');
            break;
          case 'r':
            out.push_back('\r');
            break;
          case '0':
            out.push_back('\0');
            break;
          default:
            out.push_back(e);
        }
        continue;
      }
      out.push_back(c);
    }
  }

  Value parse_plain(bool in_flow) {
    size_t start = pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (in_flow && (c == ',' || c == ']' || c == '}')) break;
      if (in_flow && c == ':' && (pos_ + 1 == s_.size() || s_[pos_ + 1] == ' ')) break;
      ++pos_;
    }
    return type_scalar(s_.substr(start, pos_ - start));
  }

  Value parse_list() {
    ++pos_;
    List out;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return Value(std::move(out));
    }
    while (true) {
      out.push_back(parse_value(true));
      skip_ws();
      if (pos_ >= s_.size()) fail("expected ',' or ']'");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == ']') {
        ++pos_;
        return Value(std::move(out));
      }
      fail("expected ',' or ']'");
    }
  }

  Value parse_dict() {
    ++pos_;
    Object out;
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      return Value(std::move(out));
    }
    while (true) {
      Value key = parse_value(true);
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') fail("expected ':' after a dict key");
      ++pos_;
      Value val = parse_value(true);
      std::string k = key.to_display_string();
      bool replaced = false;
      for (auto& m : out) {
        if (m.key == k) {
          m.value = val;
          replaced = true;
        }
      }
      if (!replaced) out.push_back({k, std::move(val)});
      skip_ws();
      if (pos_ >= s_.size()) fail("expected ',' or '}'");
      if (s_[pos_] == ',') {
        ++pos_;
        skip_ws();
        continue;
      }
      if (s_[pos_] == '}') {
        ++pos_;
        return Value(std::move(out));
      }
      fail("expected ',' or '}'");
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

void set_path(Object& root, std::string_view dotted, Value v, const std::string& item) {
  Object* obj = &root;
  while (true) {
    size_t dot = dotted.find('.');
    std::string_view part = dotted.substr(0, dot);
    if (part.empty()) throw DotlistError(fmt::format("sink option '{}': empty key component", item));
    Member* found = nullptr;
    for (auto& m : *obj) {
      if (m.key == part) found = &m;
    }
    if (dot == std::string_view::npos) {
      if (found)
        found->value = std::move(v);  // the last occurrence wins
      else
        obj->push_back({std::string(part), std::move(v)});
      return;
    }
    if (!found) {
      obj->push_back({std::string(part), Value(Object{})});
      found = &obj->back();
    } else if (!found->value.is_object()) {
      found->value = Value(Object{});
    }
    obj = &found->value.as_object();
    dotted.remove_prefix(dot + 1);
  }
}

}  // namespace

Value parse_flow_value(std::string_view text) { return FlowParser(text).parse_top(); }

Value parse_dotlist(const std::vector<std::string>& items) {
  Object root;
  for (const auto& item : items) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) throw DotlistError(fmt::format("sink option '{}' is not of the form key=value", item));
    std::string_view key = trim_white(std::string_view(item).substr(0, eq));
    if (key.empty()) throw DotlistError(fmt::format("sink option '{}' has an empty key", item));
    Value v;
    try {
      v = parse_flow_value(std::string_view(item).substr(eq + 1));
    } catch (const DotlistError& e) {
      throw DotlistError(fmt::format("sink option '{}': {}", item, e.what()));
    }
    set_path(root, key, std::move(v), item);
  }
  return Value(std::move(root));
}

}  // namespace gcm
