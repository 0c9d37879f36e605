#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "core/dotlist.h"
#include "sinks/sink.h"

namespace gcm {

namespace {
std::map<std::string, SinkFactory>& registry() {
  static std::map<std::string, SinkFactory> r;
  return r;
}
}  // namespace

bool register_sink(SinkFactory factory) {
  auto& r = registry();
  if (r.count(factory.name)) {
    std::fprintf(stderr, "sink '%s' is registered twice\n", factory.name.c_str());
    std::abort();
  }
  std::string name = factory.name;
  r.emplace(name, std::move(factory));
  return true;
}

const std::map<std::string, SinkFactory>& sink_registry() { return registry(); }

void SinkOptions::bad_type(const std::string& key, const char* expected) const {
  throw SinkUsageError(fmt::format("sink '{}': option '{}' must be {}, got {}", sink_, key, expected,
                                   find(key)->to_display_string()));
}

std::string SinkOptions::get_string(const std::string& key, const std::string& fallback) const {
  const Value* v = find(key);
  if (!v || v->is_null()) return fallback;
  if (v->is_list() || v->is_object()) bad_type(key, "a string");
  return v->to_display_string();
}

int64_t SinkOptions::get_int(const std::string& key, int64_t fallback) const {
  const Value* v = find(key);
  if (!v || v->is_null()) return fallback;
  if (v->is_int()) return v->as_int();
  if (v->is_double() && v->as_double() == static_cast<double>(static_cast<int64_t>(v->as_double())))
    return static_cast<int64_t>(v->as_double());
  bad_type(key, "an integer");
}

double SinkOptions::get_double(const std::string& key, double fallback) const {
  const Value* v = find(key);
  if (!v || v->is_null()) return fallback;
  if (v->is_number()) return v->as_number();
  bad_type(key, "a number");
}

bool SinkOptions::get_bool(const std::string& key, bool fallback) const {
  const Value* v = find(key);
  if (!v || v->is_null()) return fallback;
  if (v->is_bool()) return v->as_bool();
  bad_type(key, "true or false");
}

Object SinkOptions::get_dict(const std::string& key) const {
  const Value* v = find(key);
  if (!v || v->is_null()) return {};
  if (!v->is_object()) bad_type(key, "a dict such as {'key': 'value'}");
  return v->as_object();
}

std::unique_ptr<Sink> make_sink(const std::string& name, const std::vector<std::string>& sink_opts,
                                const SinkContext& ctx) {
  const auto& r = registry();
  auto it = r.find(name);
  if (it == r.end()) {
    std::vector<std::string> names;
    for (const auto& [n, f] : r) names.push_back("'" + n + "'");
    throw SinkUsageError(fmt::format("Sink '{}' could not be found. Here are the sinks that are registered:\n\t[{}]",
                                     name, fmt::join(names, ", ")));
  }
  const SinkFactory& factory = it->second;
  Value options;
  try {
    options = parse_dotlist(sink_opts);
  } catch (const DotlistError& e) {
    throw SinkUsageError(e.what());
  }
  std::vector<std::string> unknown;
  for (const auto& m : options.as_object()) {
    bool known = false;
    for (const auto& spec : factory.options) known = known || spec.name == m.key;
    if (!known) unknown.push_back(m.key);
  }
  if (!unknown.empty()) {
    std::vector<std::string> accepted;
    for (const auto& spec : factory.options) accepted.push_back(spec.name);
    throw SinkUsageError(fmt::format("sink '{}' does not accept option{} {}. Accepted options: {}", name,
                                     unknown.size() > 1 ? "s" : "", fmt::join(unknown, ", "),
                                     accepted.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(accepted, ", "))));
  }
  return factory.make(SinkOptions(name, std::move(options)), ctx);
}

std::string sinks_help() {
  std::string out = "Sinks (--sink NAME, options with -o key=value; values are YAML-typed: 30, 1.5, true, null,\n"
                    "[a, b], {'k': 'v'}; dotted keys nest; the last occurrence wins):\n";
  for (const auto& [name, f] : registry()) {
    out += fmt::format("  {:<11} {}\n", name, f.summary);
    for (const auto& o : f.options) {
      out += fmt::format("      {}=<{}>  {}{}\n", o.name, o.type, o.help,
                         o.default_text.empty() ? "" : " [default: " + o.default_text + "]");
    }
  }
  return out;
}

}  // namespace gcm
