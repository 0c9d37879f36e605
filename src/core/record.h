// A record: one row of a schema, values positional with the schema's fields.
#pragma once

#include <vector>

#include "core/schema.h"
#include "core/value.h"

namespace gcm {

struct Record {
  const Schema* schema = nullptr;
  std::vector<Value> values;  // values[i] belongs to schema->fields[i]; null means "absent" (Python None)
  // Set by a producer that has already looked at every byte: each string in `values`, object keys included, is
  // printable ASCII without '"' or '\\' (is_json_plain_ascii), so the JSON writer copies them without scanning them
  // again. sacct_publish knows it from splitting the line; a wrong true writes unescaped JSON, so only a producer
  // that checked sets it, and whoever changes a string of the record afterwards clears it.
  bool strings_json_plain = false;

  Record() = default;
  explicit Record(const Schema& s) : schema(&s), values(s.fields.size()) {}

  Value& operator[](size_t i) { return values[i]; }
  const Value& operator[](size_t i) const { return values[i]; }
  // By name (slow path; tests and rarely used fields). Throws std::out_of_range for an unknown field.
  Value& at(std::string_view field);
  const Value& at(std::string_view field) const;
};

// Calls `visit(field, member, value)` for each member of each object field whose schema declares members
// (FieldSpec::members) and whose value is an object; absent and null members are skipped.
template <typename Visit>
void for_each_member_field(const Schema& s, const std::vector<Value>& values, Visit&& visit) {
  for (size_t i = 0; i < s.fields.size() && i < values.size(); ++i) {
    const FieldSpec& f = s.fields[i];
    if (f.members.empty() || !values[i].is_object()) continue;
    for (const auto& m : f.members)
      if (const Value* v = values[i].find(m.name); v && !v->is_null()) visit(f, m, *v);
  }
}

}  // namespace gcm
