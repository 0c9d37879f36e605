#include "core/config.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/json.h"

namespace gcm {

namespace {

bool file_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

// A directory opens and reads as nothing on Linux, which would make it an empty config: every option silently at
// its default. Character devices (/dev/null) and FIFOs are left to read as what they hold.
void require_regular_file(const std::string& p) {
  struct stat st;
  if (::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw ConfigError(fmt::format("{}: is a directory, not a TOML config file", p));
}

}  // namespace

ConfigFile ConfigFile::from_string(const std::string& text, const std::string& root_table,
                                   const std::string& source_name) {
  ConfigFile cfg;
  cfg.path_ = source_name;
  cfg.root_name_ = root_table;
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return cfg;
  try {
    cfg.doc_ = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw ConfigError(
        fmt::format("{}:{}:{}: invalid TOML: {}", source_name, where.line, where.column, e.description()));
  }
  if (cfg.doc_.empty()) return cfg;
  const toml::node* root = cfg.doc_.get(root_table);
  if (!root || !root->is_table()) {
    std::vector<std::string> names;
    for (const auto& [k, v] : cfg.doc_) names.push_back(fmt::format("'{}'", k.str()));
    throw ConfigError(fmt::format("'{}' is not a top-level table name in {}. Valid names: [{}]", root_table,
                                  source_name, fmt::join(names, ", ")));
  }
  cfg.root_ = root->as_table();
  return cfg;
}

ConfigFile ConfigFile::load(const std::optional<std::string>& explicit_path, const std::string& root_table,
                            const std::vector<std::string>& default_paths) {
  std::string path;
  if (explicit_path) {
    path = *explicit_path;
    if (path == "/dev/null" || !file_exists(path)) {
      ConfigFile cfg;
      cfg.path_ = path;
      cfg.root_name_ = root_table;
      return cfg;
    }
  } else {
    for (const auto& p : default_paths) {
      if (file_exists(p)) {
        path = p;
        break;
      }
    }
    if (path.empty()) {
      ConfigFile cfg;
      cfg.root_name_ = root_table;
      return cfg;
    }
  }
  require_regular_file(path);
  std::ifstream in(path);
  if (!in) throw ConfigError(fmt::format("{}: cannot read the config file: {}", path, std::strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  return from_string(ss.str(), root_table, path);
}

const toml::table* ConfigFile::table_for(const std::vector<std::string>& path) const {
  const toml::table* t = root_;
  for (const auto& p : path) {
    if (!t) return nullptr;
    const toml::node* n = t->get(p);
    t = n ? n->as_table() : nullptr;
  }
  return t;
}

std::string ConfigFile::table_name(const std::vector<std::string>& path) const {
  std::string name = root_name_;
  for (const auto& p : path) name += "." + p;
  return name;
}

std::optional<std::string> toml_scalar_to_arg(const toml::node& node) {
  if (auto s = node.as_string()) return s->get();
  if (auto i = node.as_integer()) return std::to_string(i->get());
  if (auto f = node.as_floating_point()) return python_float_repr(f->get());
  if (auto b = node.as_boolean()) return b->get() ? "true" : "false";
  return std::nullopt;
}

}  // namespace gcm
