#include "slurm/rest_render_sshare.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "slurm/json_reader.h"

namespace gcm::slurm {

namespace {

using nlohmann::json;
using Path = std::initializer_list<const char*>;

// Slurm's markers in a plain number: unset (NO_VAL), unlimited (INFINITE), both also in 64 bits, and the raw shares
// of an association with Fairshare=parent (SLURMDB_FS_USE_PARENT).
constexpr int64_t kUnset32 = 0xfffffffe;
constexpr int64_t kUnlimited32 = 0xffffffff;
constexpr uint64_t kUnset64 = 0xfffffffffffffffe;
constexpr uint64_t kUnlimited64 = 0xffffffffffffffff;
constexpr int64_t kUseParentShares = 0x7fffffff;

// The number at `path`, plain or {set, infinite, number}; nullopt when null, unset or infinite. The key must be there:
// every version since v0.0.39 has it, so a missing one is a renamed key, not an unset value.
const json* number_at(const JsonReader& r, Path path) {
  const json* v = &r.at(path);
  if (v->is_null()) return nullptr;
  if (v->is_object()) {
    auto flag = [&](const char* key, bool absent) {
      if (!v->contains(key)) return absent;
      if (!(*v)[key].is_boolean()) r.fail(path, "has a set or infinite that is not a boolean");
      return (*v)[key].get<bool>();
    };
    if (!flag("set", true) || flag("infinite", false)) return nullptr;
    if (!v->contains("number")) r.fail(path, "has no number");
    v = &(*v)["number"];
  }
  if (!v->is_number()) r.fail(path, "is not a number");
  return v;
}

// print_fields_double: "%f", empty for unset and for Slurm's markers.
std::string fraction_field(const JsonReader& r, Path path) {
  const json* v = number_at(r, path);
  if (!v) return "";
  double d = v->get<double>();
  for (double marker : {static_cast<double>(kUnset64), static_cast<double>(kUnlimited64), static_cast<double>(kUnset32),
                        static_cast<double>(kUnlimited32)})
    if (d == marker) return "";
  return fmt::format("{:f}", d);
}

// RawUsage: print_fields_uint64 of the raw usage, a whole number (a fraction is cut, as sshare's cast cuts it).
std::string usage_field(const JsonReader& r, Path path) {
  const json* v = number_at(r, path);
  if (!v) return "";
  uint64_t n = 0;
  if (v->is_number_unsigned()) {
    n = v->get<uint64_t>();
  } else if (v->is_number_integer()) {
    if (v->get<int64_t>() < 0) r.fail(path, "is negative");
    n = static_cast<uint64_t>(v->get<int64_t>());
  } else {
    double d = v->get<double>();
    if (!(d >= 0) || d >= static_cast<double>(kUnlimited64)) r.fail(path, "is not a usage sshare can print");
    n = static_cast<uint64_t>(d);
  }
  if (n == kUnset64 || n == kUnlimited64) return "";
  return std::to_string(n);
}

// RawShares: the configured shares, "parent" for Fairshare=parent, empty when unset or unlimited.
std::string raw_shares_field(const JsonReader& r) {
  std::optional<int64_t> n = r.number({"shares"});
  if (!n || *n == kUnset32 || *n == kUnlimited32) return "";
  if (*n == kUseParentShares) return "parent";
  if (*n < 0) r.fail({"shares"}, "is negative");
  return std::to_string(*n);
}

// A name sshare's row can hold: no delimiter and no line break.
std::string name_field(const JsonReader& r, const char* key, bool required) {
  if (!required && !r.has(key)) return "";
  std::string name = r.str({key});
  if (required && name.empty()) r.fail({key}, "is empty");
  if (name.find_first_of("|\n") != std::string::npos) r.fail({key}, "holds a '|' or a line break");
  return name;
}

// USER or ASSOCIATION (an account's own association): true for a user's.
bool is_user(const JsonReader& r) {
  std::vector<std::string> words = r.words({"type"});
  auto has = [&](std::string_view w) { return std::find(words.begin(), words.end(), w) != words.end(); };
  if (has("USER")) return true;
  if (has("ASSOCIATION")) return false;
  r.fail({"type"}, "is neither USER nor ASSOCIATION");
}

const json& shares_list(const json& doc) {
  if (!doc.is_object() || !doc.contains("shares") || !doc["shares"].is_object())
    throw ParseError("slurmrestd shares: no \"shares\" object");
  const json& shares = doc["shares"];
  if (!shares.contains("shares") || !shares["shares"].is_array())
    throw ParseError("slurmrestd shares: no \"shares\" list in the \"shares\" object");
  return shares["shares"];
}

}  // namespace

std::string render_sshare(std::string_view shares_json) {
  json doc = parse_slurm_json(shares_json, "slurmrestd shares");
  const json& list = shares_list(doc);
  std::string out = "Account|User|RawShares|NormShares|RawUsage|EffectvUsage|FairShare\n";
  // Each account's depth in the tree, as sshare's print tree holds it: only accounts are parents.
  std::map<std::string, size_t> depth_of_account;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& a = list[i];
    std::string where = fmt::format("slurmrestd shares: shares[{}]", i);
    if (a.is_object() && a.contains("name") && a["name"].is_string())
      where += fmt::format(" ({})", a["name"].get<std::string>());
    if (!a.is_object()) throw ParseError(where + " is not an object");
    JsonReader r(a, where);
    bool user = is_user(r);
    std::string name = name_field(r, "name", /*required=*/true);
    std::string parent = name_field(r, "parent", /*required=*/user);
    auto parent_depth = depth_of_account.find(parent);
    size_t depth = parent.empty() || parent_depth == depth_of_account.end() ? 0 : parent_depth->second + 1;
    std::string account;
    if (user) {
      account = parent;  // a user's row shows its account, one level below the account's own row
    } else {
      // An account listed again keeps the depth it was first shown at, as sshare's print tree keeps it.
      depth = depth_of_account.try_emplace(name, depth).first->second;
      account = name;
    }
    const std::string fields[] = {
        std::string(depth, ' ') + account,
        user ? name : "",
        raw_shares_field(r),
        fraction_field(r, {"shares_normalized"}),
        usage_field(r, {"usage"}),
        fraction_field(r, {"effective_usage"}),
        // Fair Tree gives an account's row no fair-share factor.
        user ? fraction_field(r, {"fairshare", "factor"}) : "",
    };
    for (size_t f = 0; f < std::size(fields); ++f) {
      if (f) out.push_back('|');
      out += fields[f];
    }
    out.push_back('\n');
  }
  return out;
}

}  // namespace gcm::slurm
