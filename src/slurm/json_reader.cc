#include "slurm/json_reader.h"

#include <cstdio>

#include <fmt/format.h>

#include "core/json_limits.h"

namespace gcm::slurm {

namespace {

std::string dotted(std::initializer_list<const char*> path) {
  std::string s;
  for (const char* k : path) s += s.empty() ? std::string(k) : fmt::format(".{}", k);
  return s;
}

}  // namespace

void JsonReader::fail(std::initializer_list<const char*> path, const char* what) const {
  throw ParseError(fmt::format("{}: {} {}", where_, dotted(path), what));
}

const nlohmann::json& JsonReader::at(std::initializer_list<const char*> path) const {
  const nlohmann::json* v = &j_;
  std::string name;
  for (const char* k : path) {
    name += name.empty() ? std::string(k) : fmt::format(".{}", k);
    if (!v->is_object() || !v->contains(k)) throw ParseError(fmt::format("{}: no \"{}\"", where_, name));
    v = &(*v)[k];
  }
  return *v;
}

const nlohmann::json* JsonReader::find(std::initializer_list<const char*> path) const {
  const nlohmann::json* v = &j_;
  for (const char* k : path) {
    if (!v->is_object() || !v->contains(k)) return nullptr;
    v = &(*v)[k];
  }
  return v;
}

std::string JsonReader::str(std::initializer_list<const char*> path) const {
  const nlohmann::json& v = at(path);
  if (v.is_null()) return "";
  if (!v.is_string()) fail(path, "is not a string");
  return v.get<std::string>();
}

std::optional<int64_t> JsonReader::number(std::initializer_list<const char*> path) const {
  const nlohmann::json& v = at(path);
  if (v.is_null()) return std::nullopt;
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_object() && v.contains("number") && v["number"].is_number_integer()) {
    bool set = !v.contains("set") || (v["set"].is_boolean() && v["set"].get<bool>());
    bool infinite = v.contains("infinite") && v["infinite"].is_boolean() && v["infinite"].get<bool>();
    if (!set || infinite) return std::nullopt;
    return v["number"].get<int64_t>();
  }
  fail(path, "is not an integer");
}

int64_t JsonReader::integer(std::initializer_list<const char*> path) const {
  auto n = number(path);
  if (!n) fail(path, "is not set");
  return *n;
}

bool JsonReader::boolean(std::initializer_list<const char*> path) const {
  const nlohmann::json& v = at(path);
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>() != 0;
  fail(path, "is not a boolean");
}

std::vector<std::string> JsonReader::strings(std::initializer_list<const char*> path) const {
  const nlohmann::json& v = at(path);
  if (!v.is_array()) fail(path, "is not a list");
  std::vector<std::string> out;
  for (const nlohmann::json& e : v) {
    if (!e.is_string()) fail(path, "holds a value that is not a string");
    out.push_back(e.get<std::string>());
  }
  return out;
}

std::vector<std::string> JsonReader::words(std::initializer_list<const char*> path) const {
  const nlohmann::json& v = at(path);
  if (v.is_array()) return strings(path);
  if (v.is_null()) return {};
  if (!v.is_string()) fail(path, "is neither a string nor a list of strings");
  return {v.get<std::string>()};
}

std::string JsonReader::joined(std::initializer_list<const char*> path) const {
  std::string out;
  for (const auto& w : words(path)) out += (out.empty() ? "" : ",") + w;
  return out;
}

std::optional<std::pair<int, int>> answer_slurm_release(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("meta") || !doc["meta"].is_object()) return std::nullopt;
  const nlohmann::json& meta = doc["meta"];
  for (const char* key : {"slurm", "Slurm"}) {
    if (!meta.contains(key) || !meta[key].is_object() || !meta[key].contains("release")) continue;
    const nlohmann::json& release = meta[key]["release"];
    if (!release.is_string()) return std::nullopt;
    int major = 0, minor = 0;
    if (std::sscanf(release.get<std::string>().c_str(), "%d.%d", &major, &minor) != 2) return std::nullopt;
    return std::make_pair(major, minor);
  }
  return std::nullopt;
}

namespace {

// slurmrestd of Slurm 24.11 writes a double that is infinite or not a number as the bare words Infinity, -Infinity
// and NaN (data_parser v0.0.40 and v0.0.41 do so for a fair-share level of an association without usage), which JSON
// has no syntax for and nlohmann rejects. The copy returned has each such word outside a string replaced by null, the
// value Slurm's later data_parsers give (as {"set": false, ...}) and the readers take for "not given".
std::string without_non_finite_words(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size())
        out += text[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (std::string_view word : {"-Infinity", "Infinity", "NaN"}) {
      if (text.substr(i, word.size()) == word) {
        out += "null";
        i += word.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

}  // namespace

nlohmann::json parse_slurm_json(std::string_view text, const char* what) {
  if (auto deep = json_depth_error(text)) throw ParseError(fmt::format("{}: {}", what, *deep));
  nlohmann::json j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() &&
      (text.find("Infinity") != std::string_view::npos || text.find("NaN") != std::string_view::npos)) {
    const std::string finite = without_non_finite_words(text);
    j = nlohmann::json::parse(finite.begin(), finite.end(), nullptr, /*allow_exceptions=*/false);
  }
  if (j.is_discarded()) throw ParseError(fmt::format("{} is not valid JSON", what));
  if (!j.is_object()) throw ParseError(fmt::format("{} is not a JSON object", what));
  return j;
}

}  // namespace gcm::slurm
