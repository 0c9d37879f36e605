// A dynamically typed value: what a record field, a sink option or a config entry holds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace gcm {

class Value;
struct Member;
using List = std::vector<Value>;
// An object keeps insertion order: JSON output and flattened keys follow the order fields were produced in.
using Object = std::vector<Member>;

class Value {
 public:
  enum class Kind { Null, Bool, Int, Double, String, List, Object };

  // Constructors are defined after Member below: clang needs Member complete wherever the variant is built.
  Value();
  Value(std::nullptr_t);
  Value(bool b);
  Value(int i);
  Value(long i);
  Value(long long i);
  Value(unsigned i);
  Value(unsigned long i);
  Value(unsigned long long i);
  Value(double d);
  Value(const char* s);
  Value(std::string s);
  Value(std::string_view s);
  Value(List l);
  Value(Object o);

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_null() const { return kind() == Kind::Null; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_double() const { return kind() == Kind::Double; }
  bool is_number() const { return is_int() || is_double(); }
  bool is_string() const { return kind() == Kind::String; }
  bool is_list() const { return kind() == Kind::List; }
  bool is_object() const { return kind() == Kind::Object; }

  bool as_bool() const { return std::get<bool>(v_); }
  int64_t as_int() const { return std::get<int64_t>(v_); }
  double as_double() const { return std::get<double>(v_); }
  // Int or Double as a double (for measurements).
  double as_number() const { return is_int() ? static_cast<double>(as_int()) : as_double(); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  std::string& as_string() { return std::get<std::string>(v_); }
  const List& as_list() const { return std::get<List>(v_); }
  List& as_list() { return std::get<List>(v_); }
  const Object& as_object() const { return std::get<Object>(v_); }
  Object& as_object() { return std::get<Object>(v_); }

  // Member lookup on an object; nullptr when absent or not an object.
  const Value* find(std::string_view key) const;

  // Assign a string in place, reusing capacity: collectors reuse one record per row to avoid allocations.
  void set_string(std::string_view s);

  // A short human-readable rendering: strings unquoted, everything else as compact JSON.
  std::string to_display_string() const;

  friend bool operator==(const Value& a, const Value& b);

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, List, Object> v_;
};

struct Member {
  std::string key;
  Value value;
  friend bool operator==(const Member& a, const Member& b) { return a.key == b.key && a.value == b.value; }
};

inline Value::Value() = default;
inline Value::Value(std::nullptr_t) {}
inline Value::Value(bool b) : v_(b) {}
inline Value::Value(int i) : v_(static_cast<int64_t>(i)) {}
inline Value::Value(long i) : v_(static_cast<int64_t>(i)) {}
inline Value::Value(long long i) : v_(static_cast<int64_t>(i)) {}
inline Value::Value(unsigned i) : v_(static_cast<int64_t>(i)) {}
inline Value::Value(unsigned long i) : v_(static_cast<int64_t>(i)) {}
inline Value::Value(unsigned long long i) : v_(static_cast<int64_t>(i)) {}
inline Value::Value(double d) : v_(d) {}
inline Value::Value(const char* s) : v_(std::string(s)) {}
inline Value::Value(std::string s) : v_(std::move(s)) {}
inline Value::Value(std::string_view s) : v_(std::string(s)) {}
inline Value::Value(List l) : v_(std::move(l)) {}
inline Value::Value(Object o) : v_(std::move(o)) {}

const char* kind_name(Value::Kind k);

}  // namespace gcm
