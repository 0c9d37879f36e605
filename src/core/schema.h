// Record schemas: the one description of a record type that drives JSON output, Prometheus HELP/TYPE/labels,
// OTLP names, units and attributes, and the generated documentation.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gcm {

// GCM's two kinds of data: LOG is tabular (one row per entity), METRIC is a time series.
enum class DataType { Log, Metric };
// Which table a LOG record belongs to; the file sink routes on it.
enum class DataIdentifier { Generic, Job, Node, Statvfs, Pure, K8sPod, K8sNode };

enum class FieldType { String, Int, Double, Bool, Object, List };

enum class FieldRole {
  Attribute,  // carried in logs and JSON, neither a label nor a measurement
  Identity,   // identifies the entity: becomes a Prometheus label and an OTLP data-point attribute
  Gauge,      // a measurement that goes up and down
  Counter,    // a monotonically increasing measurement (Prometheus `_total`, OTLP cumulative sum)
};

struct FieldSpec {
  std::string name;  // the reference's field name (Appendix C): JSON key and flattened-attribute key
  FieldType type = FieldType::String;
  FieldRole role = FieldRole::Attribute;
  std::string unit;  // base unit: "bytes", "seconds", "celsius", "watts", "joules", "hertz", "ratio", "percent" or ""
  std::string help;
  std::string metric_name;  // overrides the metric's base name (without `gcm_` and unit suffix)
  // For an Object field that holds one row (GCM's KubernetesPodPayload.pod): its members, with their roles. The
  // JSON sinks write the object as it is; the metric sinks label and measure its members as if they were fields
  // (Prometheus `<field>_<member>` labels, OTLP `<field>.<member>` attributes, metrics named after the member).
  std::vector<FieldSpec> members = {};
};

struct Schema {
  std::string name;           // the reference's record class name, e.g. "Statvfs"
  std::string description;    // one line
  std::string metric_prefix;  // e.g. "statvfs" -> gcm_statvfs_<field>
  DataType data_type = DataType::Log;
  DataIdentifier identifier = DataIdentifier::Generic;
  std::vector<FieldSpec> fields;
  // Attribute fields that label the schema's info series on Prometheus, gcm_<prefix>_info{identities..., these...}
  // with the value 1 (the kube-state-metrics pattern): a node's state and drain reason, a job's state and pending
  // reason, for a panel or an alert to select and group on, without making them labels of every measurement (a
  // reason that changes would start new series of all of them).
  std::vector<std::string> info_labels;

  // Index of a field by name, or -1.
  int index_of(std::string_view field) const;
  bool is_measurement(size_t i) const {
    return fields[i].role == FieldRole::Gauge || fields[i].role == FieldRole::Counter;
  }
  bool has_measurements() const;  // members of object fields included
};

// A schema built on first use. Each record type is declared at namespace scope as
// `constinit const LazySchema kName{build}`: constant-initialised, so the project's schemas (their field names and
// help strings, more start-up than a health check's own work) cost a process nothing before main(), and a command
// builds only the ones it emits; a health check emits one.
class LazySchema {
 public:
  using Build = Schema (*)();
  constexpr explicit LazySchema(Build build) : build_(build) {}
  LazySchema(const LazySchema&) = delete;
  LazySchema& operator=(const LazySchema&) = delete;

  const Schema& get() const {
    std::call_once(once_, [this] { schema_.emplace(build_()); });
    return *schema_;
  }
  operator const Schema&() const { return get(); }  // NOLINT(google-explicit-constructor): a schema where one is used
  const Schema* operator->() const { return &get(); }

 private:
  Build build_;
  mutable std::once_flag once_;
  mutable std::optional<Schema> schema_;
};

// A schema from its parts, for the files that declare several (one line each instead of six assignments).
Schema make_schema(std::string name, std::string description, std::string metric_prefix, DataType data_type,
                   std::vector<FieldSpec> fields);

const char* to_string(DataType t);
const char* to_string(DataIdentifier id);
const char* to_string(FieldType t);
const char* to_string(FieldRole r);

// Prometheus metric name of a measurement field: gcm_<prefix>_<name>[_<unit suffix>][_total].
std::string prometheus_metric_name(const Schema& s, const FieldSpec& f);
// The info series' name: gcm_<prefix>_info.
std::string prometheus_info_metric_name(const Schema& s);
// OTLP metric name: gcm.<prefix>.<name>.
std::string otlp_metric_name(const Schema& s, const FieldSpec& f);
// UCUM unit for OTLP ("By", "s", "Cel", "W", "J", "Hz", "1", "%"); empty when the field has none.
std::string otlp_unit(const FieldSpec& f);
// A valid Prometheus label or metric name component: [a-zA-Z_][a-zA-Z0-9_]*.
std::string sanitize_metric_name(std::string_view name);

// Markdown table of a schema's fields, for `gcm schemas` (which prints every registered schema this way).
std::string schema_markdown(const Schema& s);

// Every record schema the project emits, for `gcm schemas` and generated documentation. Each schema registers
// itself from the file that defines it (a static initialiser), so adding a record type touches one file.
bool register_schema(const LazySchema* schema);
// Builds every registered schema (`gcm schemas`, the documentation tests).
std::vector<const Schema*> schema_registry();

}  // namespace gcm
