#include "sinks/prometheus_store.h"

#include <cmath>

#include <fmt/format.h>

#include "core/json.h"

namespace gcm {

std::string prometheus_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return python_float_repr(v);
}

std::string prometheus_label_escape(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out.push_back(c);
  }
  return out;
}

namespace {

std::string help_escape(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out.push_back(c);
  }
  return out;
}

std::string label_text(const Value& v) {
  if (v.is_double()) return python_float_repr(v.as_double());
  if (v.is_bool()) return v.as_bool() ? "true" : "false";
  return v.to_display_string();
}

}  // namespace

void PrometheusStore::begin_round(const Schema& s) {
  std::lock_guard lock(mu_);
  ++generation_[s.name];
}

void PrometheusStore::end_round(const Schema& s) {
  std::lock_guard lock(mu_);
  uint64_t gen = generation_[s.name];
  for (auto it = families_.begin(); it != families_.end();) {
    Family& f = it->second;
    if (f.owner == s.name) {
      for (auto si = f.samples.begin(); si != f.samples.end();) {
        if (si->second.second != gen)
          si = f.samples.erase(si);
        else
          ++si;
      }
    }
    if (f.samples.empty())
      it = families_.erase(it);
    else
      ++it;
  }
}

void PrometheusStore::set(const Schema& s, const FieldSpec& f, const std::string& labels, double v) {
  std::string name = prometheus_metric_name(s, f);
  Family& fam = families_[name];
  if (fam.owner.empty()) {
    fam.owner = s.name;
    fam.type = f.role == FieldRole::Counter ? "counter" : "gauge";
    fam.help = f.help.empty() ? fmt::format("{} of {} records", f.name, s.name) : f.help;
  }
  fam.samples[labels] = {v, generation_[s.name]};
}

void PrometheusStore::add(const Record& r) {
  const Schema& s = *r.schema;
  std::string labels;
  for (size_t i = 0; i < s.fields.size(); ++i) {
    if (s.fields[i].role != FieldRole::Identity || r.values[i].is_null()) continue;
    if (r.values[i].is_list() || r.values[i].is_object()) continue;
    if (!labels.empty()) labels.push_back(',');
    labels += sanitize_metric_name(s.fields[i].name);
    labels += "=\"";
    labels += prometheus_label_escape(label_text(r.values[i]));
    labels.push_back('"');
  }
  bool declared = s.has_measurements();
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < s.fields.size(); ++i) {
    const Value& v = r.values[i];
    bool numeric = v.is_number() || v.is_bool();
    if (!numeric) continue;
    bool measured = declared ? s.is_measurement(i)
                             : (s.data_type == DataType::Metric && s.fields[i].role != FieldRole::Identity);
    if (!measured) continue;
    double d = v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : v.as_number();
    set(s, s.fields[i], labels, d);
  }
}

std::string PrometheusStore::render() const {
  std::lock_guard lock(mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help_escape(f.help), name, f.type);
    for (const auto& [labels, sample] : f.samples) {
      out += name;
      if (!labels.empty()) {
        out.push_back('{');
        out += labels;
        out.push_back('}');
      }
      out.push_back(' ');
      out += prometheus_value(sample.first);
      out.push_back('\n');
    }
  }
  return out;
}

size_t PrometheusStore::series_count() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [name, f] : families_) n += f.samples.size();
  return n;
}

}  // namespace gcm
