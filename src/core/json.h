// JSON encoding of values and records.
//
// Written by hand rather than with nlohmann::json because the output must (1) reproduce Python's json.dumps byte for
// byte in the reference's stdout form (", "/": " separators, \uXXXX escapes of non-ASCII, Python's float repr,
// NaN/Infinity), (2) replace invalid UTF-8 instead of throwing, and (3) stream records at hundreds of MB/s without
// building a DOM. Parsing JSON input still uses nlohmann::json.
#pragma once

#include <string>
#include <string_view>

#include "core/record.h"
#include "core/value.h"

namespace gcm {

// True when s is printable ASCII without '"' and '\\': its JSON string is s between quotes, in either style.
bool is_json_plain_ascii(std::string_view s);

enum class JsonStyle {
  Compact,  // {"a":1,"b":"é"}: separators without spaces, UTF-8 kept, NaN/Infinity written as null
  Python,   // {"a": 1, "b": "\u00e9"}: Python json.dumps defaults (ensure_ascii, NaN, Infinity)
};

class JsonWriter {
 public:
  JsonWriter(std::string& out, JsonStyle style) : out_(out), style_(style) {}

  void value(const Value& v);
  void string(std::string_view s);
  void number(int64_t i);
  void number(double d);
  // A record as an object; drop_nulls removes null top-level fields (the reference's stdout LOG form).
  void record(const Record& r, bool drop_nulls);
  // Flattened record (see flatten.h) as one object.
  void flat_record(const Record& r);

 private:
  // Writes `, "key": "value"` (no separator when first) in one append when neither needs escaping; false (nothing
  // written) otherwise.
  bool plain_string_member(std::string_view key, std::string_view value, bool first);
  // Whether s needs no escaping: known for every string of a record marked strings_json_plain, else scanned.
  bool plain(std::string_view s) const;
  // Views, not C strings: appending a C string measures it with strlen, once per member of every record.
  std::string_view comma() const {
    return style_ == JsonStyle::Python ? std::string_view(", ") : std::string_view(",");
  }
  std::string_view colon() const {
    return style_ == JsonStyle::Python ? std::string_view(": ") : std::string_view(":");
  }
  std::string& out_;
  JsonStyle style_;
  bool known_plain_ = false;  // within record() of a record marked strings_json_plain
};

// Compact JSON of one value / record.
std::string to_json(const Value& v, JsonStyle style = JsonStyle::Compact);
std::string to_json(const Record& r, bool drop_nulls = false, JsonStyle style = JsonStyle::Compact);

// Size in bytes of the compact JSON encoding of a record with every field (nulls included): the unit of the
// reference's chunking rule. Computed without building the string.
size_t compact_json_size(const Record& r);

// Python's repr() of a float: shortest round-trip digits, "1.0", "1e-05", "1e+16", "nan"/"inf" handled by callers.
std::string python_float_repr(double d);

// Whether s is valid UTF-8 (what append_valid_utf8 would copy unchanged).
bool is_valid_utf8(std::string_view s);

// Appends s to out with every invalid UTF-8 sequence replaced by U+FFFD. Returns the number of replacements.
size_t append_valid_utf8(std::string& out, std::string_view s);

}  // namespace gcm
