#include "core/flatten.h"

#include <string>

namespace gcm {

namespace {

void walk(std::string& key, const Value& v, const FlatVisitor& visit);

void walk_object(std::string& key, const Object& o, const FlatVisitor& visit) {
  size_t base = key.size();
  for (const auto& m : o) {
    if (m.value.is_null()) continue;
    if (!key.empty()) key.push_back('.');
    key += m.key;
    walk(key, m.value, visit);
    key.resize(base);
  }
}

// A nested object contributes ".<name>" when it has a string "name" member; that member is then not emitted.
void walk_named_or_object(std::string& key, const Object& o, const FlatVisitor& visit) {
  for (const auto& m : o) {
    if (m.key == "name" && m.value.is_string()) {
      size_t base = key.size();
      key.push_back('.');
      key += m.value.as_string();
      size_t named = key.size();
      for (const auto& other : o) {
        if (&other == &m || other.value.is_null()) continue;
        key.push_back('.');
        key += other.key;
        walk(key, other.value, visit);
        key.resize(named);
      }
      key.resize(base);
      return;
    }
  }
  walk_object(key, o, visit);
}

void walk(std::string& key, const Value& v, const FlatVisitor& visit) {
  if (v.is_null()) return;
  if (v.is_object()) {
    walk_named_or_object(key, v.as_object(), visit);
  } else if (v.is_list()) {
    size_t base = key.size();
    const auto& l = v.as_list();
    for (size_t i = 0; i < l.size(); ++i) {
      if (l[i].is_object() && l[i].find("name") && l[i].find("name")->is_string()) {
        walk_named_or_object(key, l[i].as_object(), visit);
      } else {
        key.push_back('.');
        key += std::to_string(i);
        walk(key, l[i], visit);
      }
      key.resize(base);
    }
  } else {
    visit(key, v);
  }
}

}  // namespace

void flatten_value(std::string_view prefix, const Value& v, const FlatVisitor& visit) {
  std::string key(prefix);
  walk(key, v, visit);
}

void flatten_record(const Record& r, const FlatVisitor& visit) {
  std::string key;
  for (size_t i = 0; i < r.values.size(); ++i) {
    if (r.values[i].is_null()) continue;
    key = r.schema->fields[i].name;
    walk(key, r.values[i], visit);
  }
}

}  // namespace gcm
