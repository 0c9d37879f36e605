#include "core/value.h"

#include "core/json.h"

namespace gcm {

const Value* Value::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& m : as_object()) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

void Value::set_string(std::string_view s) {
  if (auto* str = std::get_if<std::string>(&v_)) {
    str->assign(s.data(), s.size());
  } else {
    v_ = std::string(s);
  }
}

std::string Value::to_display_string() const {
  if (is_string()) return as_string();
  std::string out;
  JsonWriter(out, JsonStyle::Compact).value(*this);
  return out;
}

bool operator==(const Value& a, const Value& b) { return a.v_ == b.v_; }

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::Null:
      return "null";
    case Value::Kind::Bool:
      return "bool";
    case Value::Kind::Int:
      return "int";
    case Value::Kind::Double:
      return "float";
    case Value::Kind::String:
      return "string";
    case Value::Kind::List:
      return "list";
    case Value::Kind::Object:
      return "dict";
  }
  return "?";
}

}  // namespace gcm
