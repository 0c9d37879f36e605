#include "core/schema.h"

#include <fmt/format.h>

namespace gcm {

int Schema::index_of(std::string_view field) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].name == field) return static_cast<int>(i);
  }
  return -1;
}

bool Schema::has_measurements() const {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (is_measurement(i)) return true;
    for (const auto& m : fields[i].members)
      if (m.role == FieldRole::Gauge || m.role == FieldRole::Counter) return true;
  }
  return false;
}

const char* to_string(DataType t) { return t == DataType::Log ? "LOG" : "METRIC"; }

const char* to_string(DataIdentifier id) {
  switch (id) {
    case DataIdentifier::Generic:
      return "GENERIC";
    case DataIdentifier::Job:
      return "JOB";
    case DataIdentifier::Node:
      return "NODE";
    case DataIdentifier::Statvfs:
      return "STATVFS";
    case DataIdentifier::Pure:
      return "PURE";
    case DataIdentifier::K8sPod:
      return "K8S_POD";
    case DataIdentifier::K8sNode:
      return "K8S_NODE";
  }
  return "?";
}

const char* to_string(FieldType t) {
  switch (t) {
    case FieldType::String:
      return "string";
    case FieldType::Int:
      return "int";
    case FieldType::Double:
      return "float";
    case FieldType::Bool:
      return "bool";
    case FieldType::Object:
      return "dict";
    case FieldType::List:
      return "list";
  }
  return "?";
}

const char* to_string(FieldRole r) {
  switch (r) {
    case FieldRole::Attribute:
      return "attribute";
    case FieldRole::Identity:
      return "identity";
    case FieldRole::Gauge:
      return "gauge";
    case FieldRole::Counter:
      return "counter";
  }
  return "?";
}

std::string sanitize_metric_name(std::string_view name) {
  std::string out;
  out.reserve(name.size() + 1);
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out.push_back(ok ? c : '_');
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(out.begin(), '_');
  return out;
}

static bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Schema make_schema(std::string name, std::string description, std::string metric_prefix, DataType data_type,
                   std::vector<FieldSpec> fields) {
  Schema s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.metric_prefix = std::move(metric_prefix);
  s.data_type = data_type;
  s.fields = std::move(fields);
  return s;
}

std::string prometheus_metric_name(const Schema& s, const FieldSpec& f) {
  std::string base =
      f.metric_name.empty() ? (s.metric_prefix.empty() ? f.name : s.metric_prefix + "_" + f.name) : f.metric_name;
  std::string name = "gcm_" + sanitize_metric_name(base);
  if (!f.unit.empty() && !ends_with(name, "_" + f.unit)) name += "_" + f.unit;
  if (f.role == FieldRole::Counter && !ends_with(name, "_total")) name += "_total";
  return name;
}

std::string prometheus_info_metric_name(const Schema& s) {
  return "gcm_" + sanitize_metric_name(s.metric_prefix.empty() ? "info" : s.metric_prefix + "_info");
}

std::string otlp_metric_name(const Schema& s, const FieldSpec& f) {
  std::string base = f.metric_name.empty() ? f.name : f.metric_name;
  return s.metric_prefix.empty() ? "gcm." + base : "gcm." + s.metric_prefix + "." + base;
}

std::string otlp_unit(const FieldSpec& f) {
  if (f.unit == "bytes") return "By";
  if (f.unit == "seconds") return "s";
  if (f.unit == "celsius") return "Cel";
  if (f.unit == "watts") return "W";
  if (f.unit == "joules") return "J";
  if (f.unit == "hertz") return "Hz";
  if (f.unit == "ratio") return "1";
  if (f.unit == "percent") return "%";
  return f.unit;
}

std::string schema_markdown(const Schema& s) {
  std::string out = fmt::format("### {} ({}, identifier {})\n\n{}\n\n", s.name, to_string(s.data_type),
                                to_string(s.identifier), s.description);
  out += "| field | type | role | unit | Prometheus | description |\n|---|---|---|---|---|---|\n";
  for (const auto& f : s.fields) {
    bool measured = f.role == FieldRole::Gauge || f.role == FieldRole::Counter;
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", f.name, to_string(f.type), to_string(f.role), f.unit,
                       measured ? "`" + prometheus_metric_name(s, f) + "`" : std::string(), f.help);
    for (const auto& m : f.members) {
      bool m_measured = m.role == FieldRole::Gauge || m.role == FieldRole::Counter;
      out += fmt::format("| `{}.{}` | {} | {} | {} | {} | {} |\n", f.name, m.name, to_string(m.type), to_string(m.role),
                         m.unit, m_measured ? "`" + prometheus_metric_name(s, m) + "`" : std::string(), m.help);
    }
  }
  if (!s.info_labels.empty()) {
    std::string labels;
    for (const auto& l : s.info_labels) labels += (labels.empty() ? "`" : ", `") + l + "`";
    out +=
        fmt::format("\nPrometheus also exports `{}` (value 1) per record, labelled with its identity fields and {}.\n",
                    prometheus_info_metric_name(s), labels);
  }
  return out;
}

namespace {
std::vector<const LazySchema*>& schemas() {
  static std::vector<const LazySchema*> r;
  return r;
}
}  // namespace

bool register_schema(const LazySchema* schema) {
  schemas().push_back(schema);
  return true;
}

std::vector<const Schema*> schema_registry() {
  std::vector<const Schema*> out;
  for (const LazySchema* s : schemas()) out.push_back(&s->get());
  return out;
}

}  // namespace gcm
