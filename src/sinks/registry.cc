#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "core/dotlist.h"
#include "sinks/sink.h"

namespace gcm {

namespace {
std::map<std::string, SinkFactory>& sinks() {
  static std::map<std::string, SinkFactory> r;
  return r;
}

// What make_sink() hands out: the sink itself behind a layer that guarantees shutdown() runs exactly once. Owners
// leave in many ways (a usage error thrown mid-round, a signal, a check that throws); putting the guarantee here
// rather than in each owner means a sink added later cannot lose buffered records because one path forgot it.
class ShutdownOnce final : public Sink {
 public:
  ShutdownOnce(std::string name, std::unique_ptr<Sink> inner, std::shared_ptr<spdlog::logger> log)
      : name_(std::move(name)), inner_(std::move(inner)), log_(std::move(log)) {}
  ~ShutdownOnce() override {
    if (done_) return;
    try {
      shutdown();
    } catch (const std::exception& e) {
      // Nobody is left to tell but the log: the owner is gone (an exception is on its way out, or it forgot).
      if (log_)
        log_->error("sink '{}': delivering what was left at exit failed: {}", name_, e.what());
      else
        std::fprintf(stderr, "sink '%s': delivering what was left at exit failed: %s\n", name_.c_str(), e.what());
    }
  }
  void begin_round(const BatchInfo& info) override { live().begin_round(info); }
  void end_round(const BatchInfo& info) override { live().end_round(info); }
  void begin_chunk(const BatchInfo& info) override { live().begin_chunk(info); }
  void write(const Record& r) override { live().write(r); }
  void end_chunk() override { live().end_chunk(); }
  void flush() override { live().flush(); }
  void shutdown() override {
    if (done_) return;
    done_ = true;  // first: a failing shutdown is not tried again by the destructor
    inner_->shutdown();
  }

 private:
  Sink& live() {
    if (done_) throw SinkError(fmt::format("sink '{}' was already shut down", name_));
    return *inner_;
  }
  std::string name_;
  std::unique_ptr<Sink> inner_;
  std::shared_ptr<spdlog::logger> log_;
  bool done_ = false;
};
}  // namespace

bool register_sink(SinkFactory factory) {
  auto& r = sinks();
  if (r.count(factory.name)) {
    std::fprintf(stderr, "sink '%s' is registered twice\n", factory.name.c_str());
    std::abort();
  }
  std::string name = factory.name;
  r.emplace(name, std::move(factory));
  return true;
}

const std::map<std::string, SinkFactory>& sink_registry() { return sinks(); }

void SinkOptions::bad_type(const std::string& key, const char* expected) const {
  throw SinkUsageError(
      fmt::format("sink '{}': option '{}' must be {}, got {}", sink_, key, expected, find(key)->to_display_string()));
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
  const auto& r = sinks();
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
    throw SinkUsageError(
        fmt::format("sink '{}' does not accept option{} {}. Accepted options: {}", name, unknown.size() > 1 ? "s" : "",
                    fmt::join(unknown, ", "),
                    accepted.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(accepted, ", "))));
  }
  return std::make_unique<ShutdownOnce>(name, factory.make(SinkOptions(name, std::move(options)), ctx), ctx.log);
}

std::string sink_names() {
  std::vector<std::string> names;
  for (const auto& [name, f] : sinks()) names.push_back(name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string sinks_help() {
  std::string out =
      "Sinks (--sink NAME, options with -o key=value; values are YAML-typed: 30, 1.5, true, null,\n"
      "[a, b], {'k': 'v'}; dotted keys nest; the last occurrence wins):\n";
  for (const auto& [name, f] : sinks()) {
    out += fmt::format("  {:<11} {}\n", name, f.summary);
    for (const auto& o : f.options) {
      out += fmt::format("      {}=<{}>  {}{}\n", o.name, o.type, o.help,
                         o.default_text.empty() ? "" : " [default: " + o.default_text + "]");
    }
  }
  return out;
}

}  // namespace gcm
