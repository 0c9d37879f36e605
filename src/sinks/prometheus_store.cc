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
  set_sample(s, prometheus_metric_name(s, f), f.role == FieldRole::Counter ? "counter" : "gauge",
             f.help.empty() ? fmt::format("{} of {} records", f.name, s.name) : f.help, labels, v);
}

void PrometheusStore::set_sample(const Schema& s, const std::string& name, const char* type, const std::string& help,
                                 const std::string& labels, double v) {
  Family& fam = families_[name];
  if (fam.owner.empty()) {
    fam.owner = s.name;
    fam.type = type;
    fam.help = help;
  }
  fam.samples[labels] = {v, generation_[s.name]};
}

namespace {

void append_label(std::string& labels, std::string_view name, const Value& v) {
  if (!labels.empty()) labels.push_back(',');
  labels += sanitize_metric_name(name);
  labels += "=\"";
  labels += prometheus_label_escape(label_text(v));
  labels.push_back('"');
}

}  // namespace

void PrometheusStore::add(const Record& r) {
  const Schema& s = *r.schema;
  std::string labels;
  for (size_t i = 0; i < s.fields.size(); ++i) {
    if (s.fields[i].role != FieldRole::Identity || r.values[i].is_null()) continue;
    if (r.values[i].is_list() || r.values[i].is_object()) continue;
    append_label(labels, s.fields[i].name, r.values[i]);
  }
  for_each_member_field(s, r.values, [&](const FieldSpec& f, const FieldSpec& m, const Value& v) {
    if (m.role == FieldRole::Identity && !v.is_list() && !v.is_object()) append_label(labels, f.name + "_" + m.name, v);
  });
  bool declared = s.has_measurements();
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < s.fields.size(); ++i) {
    const Value& v = r.values[i];
    bool numeric = v.is_number() || v.is_bool();
    if (!numeric) continue;
    bool measured =
        declared ? s.is_measurement(i) : (s.data_type == DataType::Metric && s.fields[i].role != FieldRole::Identity);
    if (!measured) continue;
    double d = v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : v.as_number();
    set(s, s.fields[i], labels, d);
  }
  for_each_member_field(s, r.values, [&](const FieldSpec&, const FieldSpec& m, const Value& v) {
    if ((m.role == FieldRole::Gauge || m.role == FieldRole::Counter) && (v.is_number() || v.is_bool()))
      set(s, m, labels, v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : v.as_number());
  });
  if (s.info_labels.empty()) return;
  std::string info = labels, names;
  for (const auto& name : s.info_labels) {
    names += (names.empty() ? "" : ", ") + name;
    // "field.member" names a member of an object field.
    if (size_t dot = name.find('.'); dot != std::string::npos) {
      int i = s.index_of(std::string_view(name).substr(0, dot));
      const Value* v = i < 0 ? nullptr : r.values[i].find(std::string_view(name).substr(dot + 1));
      if (v && !v->is_null() && !v->is_list() && !v->is_object())
        append_label(info, name.substr(0, dot) + "_" + name.substr(dot + 1), *v);
      continue;
    }
    int i = s.index_of(name);
    if (i < 0 || r.values[i].is_null() || r.values[i].is_list() || r.values[i].is_object()) continue;
    append_label(info, name, r.values[i]);
  }
  set_sample(s, prometheus_info_metric_name(s), "gauge",
             fmt::format("1 per {} record, labelled with its identity fields and {}", s.name, names), info, 1);
}

void PrometheusStore::set_collector(std::string name, double interval_seconds) {
  std::lock_guard lock(mu_);
  collector_ = std::move(name);
  interval_ = interval_seconds;
}

void PrometheusStore::round_succeeded(const Schema& s, int64_t round_start_unix) {
  std::lock_guard lock(mu_);
  Rounds& r = rounds_[s.name];
  ++r.total;
  r.last_success = round_start_unix;
}

void PrometheusStore::round_failed(const Schema& s) {
  std::lock_guard lock(mu_);
  Rounds& r = rounds_[s.name];
  ++r.total;
  ++r.failed;
}

void PrometheusStore::render_collector(std::string& out) const {
  if (collector_.empty()) return;
  std::string c = prometheus_label_escape(collector_);
  auto head = [&](const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  if (interval_ > 0) {
    head("gcm_collector_interval_seconds", "gauge", "Seconds between the starts of two rounds (--interval).");
    out += fmt::format("gcm_collector_interval_seconds{{collector=\"{}\"}} {}\n", c, prometheus_value(interval_));
  }
  if (rounds_.empty()) return;
  bool any_success = false;
  for (const auto& [schema, r] : rounds_) any_success = any_success || r.last_success > 0;
  if (any_success)
    head("gcm_collector_last_success_timestamp_seconds", "gauge",
         "Unix time at which the last round whose records reached this sink started.");
  for (const auto& [schema, r] : rounds_)
    if (r.last_success > 0)
      out += fmt::format("gcm_collector_last_success_timestamp_seconds{{collector=\"{}\",schema=\"{}\"}} {}\n", c,
                         prometheus_label_escape(schema), r.last_success);
  head("gcm_collector_rounds_total", "counter", "Collection rounds, successful or not.");
  for (const auto& [schema, r] : rounds_)
    out += fmt::format("gcm_collector_rounds_total{{collector=\"{}\",schema=\"{}\"}} {}\n", c,
                       prometheus_label_escape(schema), r.total);
  head("gcm_collector_failed_rounds_total", "counter",
       "Rounds that failed (a command or the sink failed); their series keep the last good round's values.");
  for (const auto& [schema, r] : rounds_)
    out += fmt::format("gcm_collector_failed_rounds_total{{collector=\"{}\",schema=\"{}\"}} {}\n", c,
                       prometheus_label_escape(schema), r.failed);
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
  render_collector(out);
  return out;
}

size_t PrometheusStore::series_count() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [name, f] : families_) n += f.samples.size();
  return n;
}

}  // namespace gcm
