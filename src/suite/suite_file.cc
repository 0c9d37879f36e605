#include "suite/suite_file.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace gcm::suite {

namespace {

std::string line_of(const toml::node& n) {
  const auto& src = n.source();
  return src.begin.line ? fmt::format(" (line {})", src.begin.line) : "";
}

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& where, const toml::node* n, const std::string& what) const {
    throw SuiteError(fmt::format("suite {}: {}{}: {}", file_, where, n ? line_of(*n) : "", what));
  }

  // Every key of `t` must be in `known`.
  void only(const toml::table& t, const std::string& where, const std::set<std::string>& known) const {
    for (const auto& [k, v] : t) {
      if (!known.count(std::string(k.str()))) {
        std::string list;
        for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
        fail(where, &v, fmt::format("unknown key '{}' (expected one of: {})", k.str(), list));
      }
    }
  }

  std::optional<std::string> str(const toml::table& t, const std::string& where, const char* key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_string()) fail(where, n, fmt::format("'{}' must be a string", key));
    return std::string(*n->value<std::string>());
  }

  std::optional<double> seconds(const toml::table& t, const std::string& where, const char* key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    std::optional<double> v =
        n->is_integer() ? std::optional<double>(static_cast<double>(*n->value<int64_t>())) : n->value<double>();
    if (!n->is_number() || !v || !(*v > 0))
      fail(where, n, fmt::format("'{}' must be a number of seconds greater than 0", key));
    return v;
  }

  std::optional<bool> boolean(const toml::table& t, const std::string& where, const char* key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_boolean()) fail(where, n, fmt::format("'{}' must be true or false", key));
    return *n->value<bool>();
  }

  std::optional<std::vector<std::string>> strings(const toml::table& t, const std::string& where,
                                                  const char* key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    const toml::array* a = n->as_array();
    if (!a) fail(where, n, fmt::format("'{}' must be a list of strings", key));
    std::vector<std::string> out;
    for (const auto& e : *a) {
      if (e.is_string()) {
        out.push_back(*e.value<std::string>());
      } else if (e.is_number()) {  // args = ["--gpu_num", 8] reads naturally
        out.push_back(e.is_integer() ? std::to_string(*e.value<int64_t>()) : fmt::format("{}", *e.value<double>()));
      } else {
        fail(where, &e, fmt::format("'{}' must be a list of strings", key));
      }
    }
    return out;
  }

  const toml::table* table(const toml::table& t, const std::string& where, const char* key) const {
    const toml::node* n = t.get(key);
    if (!n) return nullptr;
    if (!n->is_table()) fail(where, n, fmt::format("'{}' must be a table", key));
    return n->as_table();
  }

 private:
  std::string file_;
};

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

CheckEntry read_entry(const Reader& r, const toml::table& t, const std::string& where, const ProfileSpec& p) {
  r.only(t, where, {"name", "check", "command", "args", "options", "timeout", "severity", "fail_on", "exit_codes"});
  CheckEntry e;
  e.where = where;
  auto check = r.str(t, where, "check");
  auto command = r.strings(t, where, "command");
  if (check.has_value() == command.has_value())
    r.fail(where, &t,
           "needs exactly one of 'check' (a built-in check, e.g. \"check-nvidia-smi\") or 'command' "
           "(an external tool's argv)");
  if (check) {
    e.check = split_words(*check);
    if (e.check.empty()) r.fail(where, t.get("check"), "'check' is empty");
    if (auto a = r.strings(t, where, "args")) e.args = *a;
    if (const toml::table* o = r.table(t, where, "options")) e.options = *o;
  } else {
    e.command = *command;
    if (e.command.empty() || e.command[0].empty()) r.fail(where, t.get("command"), "'command' is empty");
    if (t.get("args") || t.get("options"))
      r.fail(where, &t, "'args' and 'options' belong to built-in checks; put a command's arguments in 'command'");
  }
  e.name = r.str(t, where, "name").value_or(check ? *check : e.command[0]);
  // The budget still ends a check whose timeout is longer (reported as such: see supervisor.h).
  e.timeout_s = r.seconds(t, where, "timeout").value_or(p.default_timeout_s);
  if (auto s = r.str(t, where, "severity")) {
    if (*s == "drain")
      e.severity = Severity::Drain;
    else if (*s == "warn")
      e.severity = Severity::Warn;
    else if (*s == "ignore")
      e.severity = Severity::Ignore;
    else
      r.fail(where, t.get("severity"), fmt::format("severity '{}' is not one of drain, warn, ignore", *s));
  }
  if (auto s = r.str(t, where, "fail_on")) {
    if (*s == "critical")
      e.fail_on_warning = false;
    else if (*s == "warning")
      e.fail_on_warning = true;
    else
      r.fail(where, t.get("fail_on"), fmt::format("fail_on '{}' is not one of critical, warning", *s));
  }
  if (auto s = r.str(t, where, "exit_codes")) {
    if (!check && *s == "nagios")
      e.nagios_exit_codes = true;
    else if (!check && *s == "zero-ok")
      e.nagios_exit_codes = false;
    else
      r.fail(where, t.get("exit_codes"), "exit_codes ('nagios' or 'zero-ok') is for commands only");
  }
  return e;
}

}  // namespace

const char* to_string(Profile p) {
  switch (p) {
    case Profile::Prolog:
      return "prolog";
    case Profile::Epilog:
      return "epilog";
    case Profile::HealthCheck:
      return "healthcheck";
    case Profile::Agent:
      return "agent";
    case Profile::Confirm:
      return "confirm";
  }
  return "?";
}

SuiteFile parse_suite(const std::string& text, const std::string& source_name) {
  toml::table doc;
  try {
    doc = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    throw SuiteError(fmt::format("suite {}: line {}, column {}: {}", source_name, e.source().begin.line,
                                 e.source().begin.column, e.description()));
  }
  Reader r(source_name);
  SuiteFile s;
  s.path = source_name;
  r.only(doc, "top level", {"suite", "slurm", "environment", "prolog", "epilog", "healthcheck", "agent", "confirm"});
  if (const toml::table* t = r.table(doc, "top level", "suite")) {
    r.only(*t, "[suite]",
           {"cluster", "log_folder", "log_level", "sink", "sink_opts", "state_dir", "gpu_job_mapping_dir",
            "features_config"});
    s.cluster = r.str(*t, "[suite]", "cluster");
    s.log_folder = r.str(*t, "[suite]", "log_folder").value_or(s.log_folder);
    s.log_level = r.str(*t, "[suite]", "log_level").value_or(s.log_level);
    s.sink = r.str(*t, "[suite]", "sink").value_or(s.sink);
    s.sink_opts = r.strings(*t, "[suite]", "sink_opts").value_or(s.sink_opts);
    s.state_dir = r.str(*t, "[suite]", "state_dir").value_or(s.state_dir);
    s.gpu_job_mapping_dir = r.str(*t, "[suite]", "gpu_job_mapping_dir").value_or("");
    s.features_config = r.str(*t, "[suite]", "features_config");
  }
  if (const toml::table* t = r.table(doc, "top level", "slurm")) {
    r.only(*t, "[slurm]", {"scontrol", "conf", "timeout", "reason_max_length"});
    s.scontrol = r.str(*t, "[slurm]", "scontrol");
    s.slurm_conf = r.str(*t, "[slurm]", "conf");
    s.slurm_timeout_s = r.seconds(*t, "[slurm]", "timeout").value_or(s.slurm_timeout_s);
    if (const toml::node* n = t->get("reason_max_length")) {
      auto v = n->value<int64_t>();
      if (!n->is_integer() || !v || *v < 16) r.fail("[slurm]", n, "'reason_max_length' must be an integer >= 16");
      s.reason_max_length = static_cast<size_t>(*v);
    }
  }
  if (const toml::table* t = r.table(doc, "top level", "environment")) {
    for (const auto& [k, v] : *t) {
      if (!v.is_string()) r.fail("[environment]", &v, fmt::format("'{}' must be a string", k.str()));
      s.environment.emplace_back(std::string(k.str()), *v.value<std::string>());
    }
  }
  for (Profile p : {Profile::Prolog, Profile::Epilog, Profile::HealthCheck, Profile::Agent, Profile::Confirm}) {
    std::string name = to_string(p);
    const toml::table* t = r.table(doc, "top level", name.c_str());
    if (!t) continue;
    std::string where = "[" + name + "]";
    r.only(*t, where, {"budget", "timeout", "drain", "checks"});
    ProfileSpec spec;
    spec.drain = p == Profile::HealthCheck;
    spec.budget_s = r.seconds(*t, where, "budget").value_or(spec.budget_s);
    spec.default_timeout_s = r.seconds(*t, where, "timeout").value_or(spec.default_timeout_s);
    spec.drain = r.boolean(*t, where, "drain").value_or(spec.drain);
    if (const toml::node* n = t->get("checks")) {
      const toml::array* a = n->as_array();
      if (!a) r.fail(where, n, "'checks' must be an array of tables ([[" + name + ".checks]])");
      std::set<std::string> names;
      int i = 0;
      for (const auto& e : *a) {
        std::string ewhere = fmt::format("[[{}.checks]] #{}", name, ++i);
        if (!e.is_table()) r.fail(ewhere, &e, "must be a table");
        CheckEntry entry = read_entry(r, *e.as_table(), ewhere, spec);
        entry.where = source_name + ": " + ewhere + line_of(e);
        if (!names.insert(entry.name).second)
          r.fail(ewhere, &e,
                 fmt::format("a second check named '{}' (names must be unique: add name = \"...\")", entry.name));
        spec.checks.push_back(std::move(entry));
      }
    }
    s.profiles[p] = std::move(spec);
  }
  return s;
}

SuiteFile load_suite(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw SuiteError(fmt::format("suite {}: cannot be read", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_suite(ss.str(), path);
}

std::string default_suite_path() {
  const char* env = std::getenv("GCM_SUITE");
  return env && *env ? env : "/etc/gcm/suite.toml";
}

}  // namespace gcm::suite
