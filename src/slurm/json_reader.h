// Reading one object of Slurm's JSON (sinfo/squeue --json, slurmrestd) with errors that name the object and the key:
// "sinfo --json: nodes[3]: cpus is not an integer". Slurm writes numbers either plain or as {set, infinite, number}
// (its NO_VAL form), and some lists either as a JSON list or as a comma-separated string, depending on the version.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "slurm/parse_error.h"

namespace gcm::slurm {

class JsonReader {
 public:
  JsonReader(const nlohmann::json& object, std::string where) : j_(object), where_(std::move(where)) {}

  bool has(const char* key) const { return j_.is_object() && j_.contains(key); }
  // Where the object is, as errors name it ("sinfo --json: nodes[3]").
  const std::string& where() const { return where_; }
  // The value at a key path; throws ParseError naming the path when a key is missing.
  const nlohmann::json& at(std::initializer_list<const char*> path) const;
  // The value at a key path, or nullptr when a key on it is missing (a version of Slurm that leaves it out).
  const nlohmann::json* find(std::initializer_list<const char*> path) const;
  // A string; null is "".
  std::string str(std::initializer_list<const char*> path) const;
  // A plain integer or {set, infinite, number}: nullopt when unset, infinite or null.
  std::optional<int64_t> number(std::initializer_list<const char*> path) const;
  // number(), required to be set.
  int64_t integer(std::initializer_list<const char*> path) const;
  // A boolean (or 0/1).
  bool boolean(std::initializer_list<const char*> path) const;
  // A list of strings.
  std::vector<std::string> strings(std::initializer_list<const char*> path) const;
  // A list of strings or one string (a state word, a comma-separated list): the words, in order.
  std::vector<std::string> words(std::initializer_list<const char*> path) const;
  // A list of strings joined by ',' or one string as it is.
  std::string joined(std::initializer_list<const char*> path) const;

  [[noreturn]] void fail(std::initializer_list<const char*> path, const char* what) const;

 private:
  const nlohmann::json& j_;
  std::string where_;
};

// The Slurm release that wrote a slurmrestd answer, from its meta (meta.Slurm.release in v0.0.38, meta.slurm.release
// from v0.0.39 on): (24, 11) for "24.11.7"; nullopt when the answer does not say.
std::optional<std::pair<int, int>> answer_slurm_release(const nlohmann::json& doc);

// Parses a whole document with the project's nesting bound (core/json_limits.h); `what` names it in errors
// ("sinfo --json output"). Throws ParseError.
nlohmann::json parse_slurm_json(std::string_view text, const char* what);

}  // namespace gcm::slurm
