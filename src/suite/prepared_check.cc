#include "suite/prepared_check.h"

#include <algorithm>
#include <cmath>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/option_binder.h"
#include "core/config.h"

namespace gcm::suite {

Prepared::Prepared() = default;
Prepared::~Prepared() = default;

namespace {

std::string known_checks() {
  std::string s;
  for (const auto& spec : health::health_check_registry())
    s += (s.empty() ? "" : ", ") + fmt::format("'{}'", fmt::join(spec.path, " "));
  return s;
}

void apply_options(Prepared& p) {
  const CheckEntry& e = *p.entry;
  for (const auto& [key_node, node] : *e.options) {
    std::string key(key_node.str());
    CLI::Option* opt = nullptr;
    std::string known;
    for (const auto& [param, o] : p.binder->bindings()) {
      if (param == key) opt = o;
      known += (known.empty() ? "" : ", ") + param;
    }
    if (!opt)
      throw SuiteError(fmt::format("suite {}: options: '{}' is not an option of '{}' (its options: {})", e.where, key,
                                   fmt::join(e.check, " "), known));
    if (opt->count() > 0) continue;  // args win
    std::vector<std::string> args;
    if (const toml::array* arr = node.as_array()) {
      for (const auto& v : *arr)
        if (auto s = toml_scalar_to_arg(v))
          args.push_back(*s);
        else
          throw SuiteError(fmt::format("suite {}: options.{}: list items must be strings or numbers", e.where, key));
    } else if (auto s = toml_scalar_to_arg(node)) {
      args.push_back(*s);
    } else {
      throw SuiteError(fmt::format("suite {}: options.{}: expected a string, number or boolean", e.where, key));
    }
    try {
      opt->add_result(args);
      opt->run_callback();
    } catch (const CLI::Error& err) {
      throw SuiteError(fmt::format("suite {}: options.{} = {}: {}", e.where, key, fmt::join(args, ", "), err.what()));
    }
  }
}

}  // namespace

std::vector<std::unique_ptr<Prepared>> prepare(const ProfileSpec& spec) {
  std::vector<std::unique_ptr<Prepared>> out;
  for (const auto& e : spec.checks) {
    auto p = std::make_unique<Prepared>();
    p->entry = &e;
    if (!e.check.empty()) {
      for (const auto& s : health::health_check_registry())
        if (s.path == e.check) p->spec = &s;
      if (!p->spec)
        throw SuiteError(fmt::format("suite {}: unknown check '{}' for '{}' (checks in this build: {})", e.where,
                                     fmt::join(e.check, " "), e.name, known_checks()));
      p->app = std::make_unique<CLI::App>(e.name, fmt::format("{}", fmt::join(e.check, " ")));
      p->binder = std::make_unique<OptionBinder>(*p->app);
      p->timeout_opt = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(e.timeout_s)));
      if (p->spec->has_timeout)
        p->binder->option("--timeout", "timeout", p->timeout_opt, "Seconds each external command may run.");
      p->check = p->spec->setup(*p->binder);
      one_value_per_occurrence(*p->app);  // args mean what they mean on a health_checks command line
      std::vector<std::string> rev(e.args.rbegin(), e.args.rend());
      try {
        p->app->parse(rev);
      } catch (const CLI::ParseError& err) {
        throw SuiteError(fmt::format("suite {}: args of '{}': {}", e.where, fmt::join(e.check, " "), err.what()));
      }
      if (e.options) apply_options(*p);
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace gcm::suite
