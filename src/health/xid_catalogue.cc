#include "health/xid_catalogue.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace gcm::health {

std::optional<XidSeverity> parse_xid_severity(std::string_view s) {
  if (s == "ignore") return XidSeverity::Ignore;
  if (s == "warn" || s == "warning") return XidSeverity::Warn;
  if (s == "critical") return XidSeverity::Critical;
  return std::nullopt;
}

const char* to_string(XidSeverity s) {
  switch (s) {
    case XidSeverity::Ignore:
      return "ignore";
    case XidSeverity::Warn:
      return "warn";
    case XidSeverity::Critical:
      return "critical";
  }
  return "critical";
}

namespace {

std::string string_field(const toml::table& t, const char* key, const std::string& where) {
  const toml::node* n = t.get(key);
  if (!n) return "";
  if (!n->is_string()) throw XidCatalogueError(fmt::format("{}: '{}' must be a string", where, key));
  return std::string(*n->value<std::string>());
}

}  // namespace

XidCatalogue XidCatalogue::parse(std::string_view toml_text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    throw XidCatalogueError(fmt::format("{}: line {}: {}", source, e.source().begin.line, e.description()));
  }
  XidCatalogue cat;
  cat.version_ = root["catalogue_version"].value_or(std::string());
  const toml::array* list = root["xid"].as_array();
  if (!list) throw XidCatalogueError(fmt::format("{}: expected [[xid]] tables", source));
  for (const toml::node& n : *list) {
    const toml::table* t = n.as_table();
    int line = static_cast<int>(n.source().begin.line);
    std::string where = fmt::format("{}: line {}", source, line);
    if (!t) throw XidCatalogueError(where + ": an [[xid]] entry must be a table");
    auto code = (*t)["code"].value<int64_t>();
    if (!code || *code < 0 || *code > 1000000) throw XidCatalogueError(where + ": 'code' must be an XID number");
    where = fmt::format("{} (xid {})", where, *code);
    XidInfo info;
    info.code = static_cast<int>(*code);
    std::string sev = string_field(*t, "severity", where);
    if (!sev.empty()) {
      auto s = parse_xid_severity(sev);
      if (!s) throw XidCatalogueError(fmt::format("{}: severity '{}' is not ignore, warn or critical", where, sev));
      info.severity = *s;
    }
    if (const toml::node* c = t->get("causes")) {
      const toml::array* arr = c->as_array();
      if (!arr) throw XidCatalogueError(where + ": 'causes' must be a list of strings");
      for (const toml::node& x : *arr) {
        if (!x.is_string()) throw XidCatalogueError(where + ": 'causes' must be a list of strings");
        info.causes.push_back(std::string(*x.value<std::string>()));
      }
      std::sort(info.causes.begin(), info.causes.end());
    }
    info.mnemonic = string_field(*t, "mnemonic", where);
    info.description = string_field(*t, "description", where);
    info.immediate_action = string_field(*t, "immediate_action", where);
    info.investigatory_action = string_field(*t, "investigatory_action", where);
    if (!cat.entries_.emplace(info.code, info).second)
      throw XidCatalogueError(fmt::format("{}: xid {} appears twice", where, info.code));
  }
  return cat;
}

XidCatalogue XidCatalogue::load_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw XidCatalogueError(fmt::format("cannot read the XID catalogue {}", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path);
}

namespace {

XidInfo info_of(const XidEntryData& d) {
  XidInfo x;
  x.code = d.code;
  x.severity = d.severity;
  std::string_view causes = d.causes;
  while (!causes.empty()) {
    size_t bar = causes.find('|');
    x.causes.emplace_back(causes.substr(0, bar));
    causes.remove_prefix(bar == std::string_view::npos ? causes.size() : bar + 1);
  }
  x.mnemonic = d.mnemonic;
  x.description = d.description;
  x.immediate_action = d.immediate_action;
  x.investigatory_action = d.investigatory_action;
  return x;
}

}  // namespace

XidInfo XidCatalogue::lookup(int code) const {
  auto it = entries_.find(code);
  if (it != entries_.end()) return it->second;
  const XidEntryData* end = table_ + table_size_;
  const XidEntryData* e = std::lower_bound(table_, end, code, [](const XidEntryData& d, int c) { return d.code < c; });
  if (e != end && e->code == code) return info_of(*e);
  XidInfo unknown;
  unknown.code = code;
  return unknown;
}

std::vector<XidInfo> XidCatalogue::entries() const {
  std::map<int, XidInfo> all;
  for (size_t i = 0; i < table_size_; ++i) all.emplace(table_[i].code, info_of(table_[i]));
  for (const auto& [code, info] : entries_) all[code] = info;
  std::vector<XidInfo> v;
  for (auto& [code, info] : all) v.push_back(std::move(info));
  return v;
}

void XidCatalogue::apply_override(std::string_view entry) {
  size_t eq = entry.find('=');
  int code = 0;
  std::string_view num = entry.substr(0, eq);
  auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), code);
  auto level = eq == std::string_view::npos ? std::nullopt : parse_xid_severity(entry.substr(eq + 1));
  if (eq == std::string_view::npos || ec != std::errc() || p != num.data() + num.size() || !level)
    throw XidCatalogueError(
        fmt::format("xid severity override '{}': expected CODE=LEVEL with LEVEL ignore, warn or critical", entry));
  auto it = entries_.find(code);
  if (it == entries_.end()) it = entries_.emplace(code, lookup(code)).first;
  it->second.severity = *level;
}

}  // namespace gcm::health
