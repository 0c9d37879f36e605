#include "slurm/rest_render_sacctmgr.h"

#include <algorithm>
#include <initializer_list>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "slurm/json_reader.h"
#include "slurm/rest_render.h"

namespace gcm::slurm {

namespace {

using nlohmann::json;
using Path = std::initializer_list<const char*>;

// An unsigned count or limit: a plain integer, or {set, infinite, number} (v0.0.40+); nullopt when unset.
std::optional<int64_t> count_at(const JsonReader& r, Path path) {
  if (!r.find(path)) return std::nullopt;
  return r.number(path);
}

std::string count_field(const JsonReader& r, Path path) {
  auto n = count_at(r, path);
  return n ? std::to_string(*n) : "";
}

// A time in seconds (grace, preemption exemption) or minutes (wall clock limits), as sacctmgr prints it.
std::string seconds_field(const JsonReader& r, Path path) {
  auto n = count_at(r, path);
  return n ? slurm_duration(*n, /*always_hours=*/true) : "";
}
std::string minutes_field(const JsonReader& r, Path path) {
  auto n = count_at(r, path);
  return n ? slurm_duration(*n * 60, /*always_hours=*/true) : "";
}

// print_fields_double: "%f", empty when unset.
std::string float_field(const JsonReader& r, Path path) {
  const json* v = r.find(path);
  if (!v || v->is_null()) return "";
  const json* n = v;
  if (v->is_object()) {  // {set, infinite, number}
    auto flag = [&](const char* key, bool absent) {
      if (!v->contains(key)) return absent;
      if (!(*v)[key].is_boolean()) r.fail(path, "has a set or infinite that is not a boolean");
      return (*v)[key].get<bool>();
    };
    if (!flag("set", true) || flag("infinite", false)) return "";
    n = v->contains("number") ? &(*v)["number"] : nullptr;
  }
  if (!n || !n->is_number()) r.fail(path, "is not a number");
  return fmt::format("{:f}", n->get<double>());
}

// Memory (and burst buffer) TRES counts are MB, which sacctmgr prints as convert_num_unit does: divided by 1024
// while at least 1024, then whole ("64G") or with two decimals ("1.50G" for 1536).
std::string megabytes(int64_t mb) {
  if (mb == 0) return "0";
  static constexpr char kUnits[] = "MGTP";
  double value = static_cast<double>(mb);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < sizeof(kUnits) - 1) {
    value /= 1024;
    ++unit;
  }
  if (value == static_cast<double>(static_cast<int64_t>(value)))
    return fmt::format("{}{}", static_cast<int64_t>(value), kUnits[unit]);
  return fmt::format("{:.2f}{}", value, kUnits[unit]);
}

// A TRES list ([{type, name, id, count}]) as sacctmgr prints it: "cpu=8,gres/gpu=4,mem=64G", sorted by name.
std::string tres_field(const JsonReader& r, Path path) {
  const json* v = r.find(path);
  if (!v || v->is_null()) return "";
  if (!v->is_array()) r.fail(path, "is not a TRES list");
  std::vector<std::pair<std::string, std::string>> items;
  for (size_t i = 0; i < v->size(); ++i) {
    JsonReader t((*v)[i], fmt::format("{}: {}[{}]", r.where(), fmt::join(path, "."), i));
    std::string type = t.str({"type"});
    std::string tres_name = t.has("name") ? t.str({"name"}) : "";
    std::optional<int64_t> count = t.number({"count"});
    if (!count) continue;  // an unset limit of one TRES
    items.emplace_back(tres_name.empty() ? type : type + "/" + tres_name,
                       type == "mem" || type == "bb" ? megabytes(*count) : std::to_string(*count));
  }
  std::sort(items.begin(), items.end());
  std::string out;
  for (const auto& [key, value] : items) out += fmt::format("{}{}={}", out.empty() ? "" : ",", key, value);
  return out;
}

// slurmrestd's QOS flag names and sacctmgr's (slurmdb_qos_flags_str), in the order sacctmgr prints them.
constexpr std::pair<std::string_view, std::string_view> kQosFlags[] = {
    {"DENY_LIMIT", "DenyOnLimit"},
    {"ENFORCE_USAGE_THRESHOLD", "EnforceUsageThreshold"},
    {"NO_RESERVE", "NoReserve"},
    {"PARTITION_MAXIMUM_NODE", "PartitionMaxNodes"},
    {"PARTITION_MINIMUM_NODE", "PartitionMinNodes"},
    {"OVERRIDE_PARTITION_QOS", "OverPartQOS"},
    {"PARTITION_TIME_LIMIT", "PartitionTimeLimit"},
    {"REQUIRED_RESERVATION", "RequiresReservation"},
    {"NO_DECAY", "NoDecay"},
    {"USAGE_FACTOR_SAFE", "UsageFactorSafe"},
};

std::string flags_field(const JsonReader& r) {
  if (!r.find({"flags"})) return "";
  std::vector<std::string> given = r.words({"flags"});
  std::string out;
  auto add = [&](std::string_view word) { out += fmt::format("{}{}", out.empty() ? "" : ",", word); };
  for (const auto& [rest, cli] : kQosFlags)
    if (std::find(given.begin(), given.end(), rest) != given.end()) add(cli);
  // A flag this table does not know (a newer Slurm) is kept under slurmrestd's name rather than dropped.
  for (const auto& g : given)
    if (std::none_of(std::begin(kQosFlags), std::end(kQosFlags), [&](const auto& f) { return f.first == g; })) add(g);
  return out;
}

// sacctmgr's PreemptMode column: "cluster" when the QOS sets none, else preempt_mode_string in lower case, where
// GANG comes first ("gang,suspend").
std::string preempt_mode_field(const JsonReader& r) {
  if (!r.find({"preempt", "mode"})) return "cluster";
  std::vector<std::string> modes = r.words({"preempt", "mode"});
  // PREEMPT_MODE_OFF is "OFF" up to v0.0.39 and "DISABLED" from v0.0.40 on: sacctmgr prints neither.
  modes.erase(
      std::remove_if(modes.begin(), modes.end(), [](const std::string& m) { return m == "OFF" || m == "DISABLED"; }),
      modes.end());
  if (modes.empty()) return "cluster";
  std::string out;
  if (std::find(modes.begin(), modes.end(), "GANG") != modes.end()) {
    out = "gang";
    modes.erase(std::remove(modes.begin(), modes.end(), "GANG"), modes.end());
  }
  for (auto m : modes) {
    std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    out += (out.empty() ? "" : ",") + m;
  }
  return out;
}

// A list of QOS names, sorted and joined as sacctmgr prints one.
std::string sorted_names(const JsonReader& r, Path path) {
  const json* v = r.find(path);
  if (!v || v->is_null()) return "";
  std::vector<std::string> names = r.words(path);
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

const json& list_of(const json& doc, const char* key, const char* what) {
  if (!doc.contains(key) || !doc[key].is_array()) throw ParseError(fmt::format("{}: no \"{}\" list", what, key));
  return doc[key];
}

}  // namespace

std::string render_sacctmgr_qos(std::string_view qos_json) {
  json doc = parse_slurm_json(qos_json, "slurmrestd qos");
  // sacctmgr of Slurm 24.11 and later prints two more columns by default (MaxTRESRunMinsPA and MaxTRESRunMinsPU,
  // after MaxTRESPA; recorded on 24.11 and 25.11); 22.05's does not. The answer says which Slurm wrote it.
  const auto release = answer_slurm_release(doc);
  const bool run_mins_columns = release && *release >= std::make_pair(24, 11);
  std::string out =
      "Name|Priority|GraceTime|Preempt|PreemptExemptTime|PreemptMode|Flags|UsageThres|UsageFactor|GrpTRES|"
      "GrpTRESMins|GrpTRESRunMins|GrpJobs|GrpSubmit|GrpWall|MaxTRES|MaxTRESPerNode|MaxTRESMins|MaxWall|MaxTRESPU|"
      "MaxJobsPU|MaxSubmitPU|MaxTRESPA|";
  out += run_mins_columns ? "MaxTRESRunMinsPA|MaxTRESRunMinsPU|" : "";
  out += "MaxJobsPA|MaxSubmitPA|MinTRES\n";
  // v0.0.36-v0.0.38 name the list "QOS", later versions "qos".
  const json& list = list_of(doc, doc.contains("QOS") ? "QOS" : "qos", "slurmrestd qos");
  for (size_t i = 0; i < list.size(); ++i) {
    const json& q = list[i];
    JsonReader r(q, fmt::format("slurmrestd qos: qos[{}]", i));
    std::vector<std::string> fields = {
        r.str({"name"}),
        count_field(r, {"priority"}),
        seconds_field(r, {"limits", "grace_time"}),
        sorted_names(r, {"preempt", "list"}),
        seconds_field(r, {"preempt", "exempt_time"}),
        preempt_mode_field(r),
        flags_field(r),
        float_field(r, {"usage_threshold"}),
        float_field(r, {"usage_factor"}),
        tres_field(r, {"limits", "max", "tres", "total"}),
        // GrpTRESMins and GrpSubmit: from v0.0.42 on; v0.0.38-v0.0.41 have no key for them (slurmrestd's QOS parser
        // skips grp_tres_mins and grp_submit_jobs), so they are empty there.
        tres_field(r, {"limits", "max", "tres", "minutes", "total"}),
        tres_field(r, {"limits", "max", "tres", "minutes", "per", "qos"}),
        count_field(r, {"limits", "max", "active_jobs", "count"}),
        count_field(r, {"limits", "max", "jobs", "count"}),
        minutes_field(r, {"limits", "max", "wall_clock", "per", "qos"}),
        tres_field(r, {"limits", "max", "tres", "per", "job"}),
        tres_field(r, {"limits", "max", "tres", "per", "node"}),
        tres_field(r, {"limits", "max", "tres", "minutes", "per", "job"}),
        minutes_field(r, {"limits", "max", "wall_clock", "per", "job"}),
        tres_field(r, {"limits", "max", "tres", "per", "user"}),
        count_field(r, {"limits", "max", "jobs", "active_jobs", "per", "user"}),
        count_field(r, {"limits", "max", "jobs", "per", "user"}),
        tres_field(r, {"limits", "max", "tres", "per", "account"}),
    };
    if (run_mins_columns) {
      fields.push_back(tres_field(r, {"limits", "max", "tres", "minutes", "per", "account"}));
      fields.push_back(tres_field(r, {"limits", "max", "tres", "minutes", "per", "user"}));
    }
    for (auto&& f : {count_field(r, {"limits", "max", "jobs", "active_jobs", "per", "account"}),
                     count_field(r, {"limits", "max", "jobs", "per", "account"}),
                     tres_field(r, {"limits", "min", "tres", "per", "job"})})
      fields.push_back(f);
    bool first = true;
    for (const auto& f : fields) {
      if (f.find_first_of("|\n") != std::string::npos)
        throw ParseError(fmt::format("slurmrestd qos: qos[{}]: a value holds '|' or a line break: {}", i, f));
      if (!first) out.push_back('|');
      out += f;
      first = false;
    }
    out.push_back('\n');
  }
  return out;
}

std::string render_sacctmgr_users(std::string_view users_json) {
  json doc = parse_slurm_json(users_json, "slurmrestd users");
  const json& list = list_of(doc, "users", "slurmrestd users");
  std::string out;
  for (size_t i = 0; i < list.size(); ++i) {
    JsonReader r(list[i], fmt::format("slurmrestd users: users[{}]", i));
    std::string name = r.str({"name"});
    if (name.empty() || name.find_first_of("|\n") != std::string::npos) r.fail({"name"}, "is not a user name");
    out += name;
    out.push_back('\n');
  }
  return out;
}

std::string render_sacctmgr_user_assoc(std::string_view associations_json, std::string_view user) {
  json doc = parse_slurm_json(associations_json, "slurmrestd associations");
  const json& list = list_of(doc, "associations", "slurmrestd associations");
  struct Row {
    std::string account, default_qos, qos;
  };
  std::vector<Row> rows;
  std::string default_account;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& a = list[i];
    JsonReader r(a, fmt::format("slurmrestd associations: associations[{}]", i));
    if (r.str({"user"}) != user) continue;  // the accounts' own associations, or another user's
    Row row{r.str({"account"}), r.find({"default", "qos"}) ? r.str({"default", "qos"}) : "", sorted_names(r, {"qos"})};
    bool is_default = r.find({"is_default"}) ? r.boolean({"is_default"}) : false;
    if (!is_default && r.find({"flags"})) {
      std::vector<std::string> flags = r.words({"flags"});
      is_default = std::find(flags.begin(), flags.end(), "DEFAULT") != flags.end();
    }
    if (is_default && default_account.empty()) default_account = row.account;
    for (const std::string* v : {&row.account, &row.default_qos, &row.qos})
      if (v->find_first_of("|\n") != std::string::npos)
        throw ParseError(
            fmt::format("slurmrestd associations: associations[{}]: a value holds '|' or a line break: {}", i, *v));
    rows.push_back(std::move(row));
  }
  std::string out = "User|Def Acct|Account|Def QOS|QOS\n";
  for (const Row& row : rows)
    out += fmt::format("{}|{}|{}|{}|{}\n", user, default_account, row.account, row.default_qos, row.qos);
  return out;
}

}  // namespace gcm::slurm
