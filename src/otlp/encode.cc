#include "otlp/encode.h"

#include <google/protobuf/util/json_util.h>

#include "core/flatten.h"
#include "core/json.h"

namespace gcm::otlp {

namespace pb_logs = opentelemetry::proto::logs::v1;
namespace pb_metrics = opentelemetry::proto::metrics::v1;

namespace {

// Protobuf strings must be UTF-8 and receivers reject a request holding one that is not; values from the host (a
// sysfs attribute, a process name, a GPU's serial) can be anything. Valid text, the common case, costs one scan.
std::string utf8(const std::string& s) {
  if (is_valid_utf8(s)) return s;
  std::string out;
  append_valid_utf8(out, s);
  return out;
}

}  // namespace

void to_any_value(const Value& v, pb_common::AnyValue* out) {
  switch (v.kind()) {
    case Value::Kind::Null:
      break;  // an empty AnyValue
    case Value::Kind::Bool:
      out->set_bool_value(v.as_bool());
      break;
    case Value::Kind::Int:
      out->set_int_value(v.as_int());
      break;
    case Value::Kind::Double:
      out->set_double_value(v.as_double());
      break;
    case Value::Kind::String:
      out->set_string_value(utf8(v.as_string()));
      break;
    case Value::Kind::List: {
      auto* arr = out->mutable_array_value();
      for (const auto& e : v.as_list()) to_any_value(e, arr->add_values());
      break;
    }
    case Value::Kind::Object: {
      auto* kv = out->mutable_kvlist_value();
      for (const auto& m : v.as_object()) {
        auto* item = kv->add_values();
        item->set_key(utf8(m.key));
        to_any_value(m.value, item->mutable_value());
      }
      break;
    }
  }
}

void add_attribute(google::protobuf::RepeatedPtrField<pb_common::KeyValue>* attrs, const std::string& key,
                   const Value& v) {
  auto* kv = attrs->Add();
  kv->set_key(utf8(key));
  to_any_value(v, kv->mutable_value());
}

namespace {

void fill_resource(opentelemetry::proto::resource::v1::Resource* res, const Object& attrs) {
  for (const auto& m : attrs) add_attribute(res->mutable_attributes(), m.key, m.value);
}

void fill_scope(pb_common::InstrumentationScope* scope) {
  scope->set_name("gcm");
  scope->set_version(GCM_VERSION);
}

// A fresh request on a fresh arena with one resource (its attributes) and one scope named "gcm"; returns the scope.
// Both builders start every request this way.
template <typename Request, typename AddResource, typename AddScope>
auto start_request(std::unique_ptr<google::protobuf::Arena>& arena, Request*& req, const Object& resource,
                   AddResource add_resource, AddScope add_scope) {
  arena = std::make_unique<google::protobuf::Arena>();
  req = google::protobuf::Arena::CreateMessage<Request>(arena.get());
  auto* res = add_resource(req);
  fill_resource(res->mutable_resource(), resource);
  auto* scope = add_scope(res);
  fill_scope(scope->mutable_scope());
  return scope;
}

}  // namespace

LogsBuilder::LogsBuilder(const Object& resource_attributes) : resource_(resource_attributes) { clear(); }

void LogsBuilder::add(const Record& r, int64_t ts_seconds, uint64_t observed_unix_nano) {
  auto* lr = scope_->add_log_records();
  lr->set_time_unix_nano(static_cast<uint64_t>(ts_seconds) * 1000000000ull);
  lr->set_observed_time_unix_nano(observed_unix_nano);
  lr->set_severity_number(pb_logs::SEVERITY_NUMBER_INFO);
  lr->set_severity_text("INFO");
  lr->mutable_body()->set_string_value("");
  auto* attrs = lr->mutable_attributes();
  flatten_record(r, [&](std::string_view key, const Value& v) { add_attribute(attrs, std::string(key), v); });
  add_attribute(attrs, "time", Value(ts_seconds));
  ++records_;
  bytes_ += lr->ByteSizeLong() + 8;
}

void LogsBuilder::clear() {
  scope_ = start_request(
      arena_, req_, resource_, [](auto* req) { return req->add_resource_logs(); },
      [](auto* rl) { return rl->add_scope_logs(); });
  records_ = 0;
  bytes_ = 0;
}

MetricsBuilder::MetricsBuilder(const Object& resource_attributes) : resource_(resource_attributes) { clear(); }

size_t MetricsBuilder::add(const Record& r, int64_t ts_seconds) {
  const Schema& s = *r.schema;
  // The identity attributes are built once, into the record's first data point, and copied to the others.
  const google::protobuf::RepeatedPtrField<pb_common::KeyValue>* first_attrs = nullptr;
  auto fill_attrs = [&](google::protobuf::RepeatedPtrField<pb_common::KeyValue>* attrs) {
    if (first_attrs) {
      *attrs = *first_attrs;
      return;
    }
    for (size_t i = 0; i < s.fields.size(); ++i) {
      if (s.fields[i].role != FieldRole::Identity || r.values[i].is_null()) continue;
      flatten_value(s.fields[i].name, r.values[i],
                    [&](std::string_view key, const Value& v) { add_attribute(attrs, std::string(key), v); });
    }
    for_each_member_field(s, r.values, [&](const FieldSpec& f, const FieldSpec& m, const Value& v) {
      if (m.role == FieldRole::Identity && !v.is_list() && !v.is_object())
        add_attribute(attrs, f.name + "." + m.name, v);
    });
    first_attrs = attrs;
  };
  bool declared = s.has_measurements();
  uint64_t t = static_cast<uint64_t>(ts_seconds) * 1000000000ull;
  size_t added = 0;
  auto add_point = [&](const FieldSpec& f, const Value& v) {
    std::string name = otlp_metric_name(s, f);
    auto it = by_name_.find(name);
    pb_metrics::Metric* m;
    if (it == by_name_.end()) {
      m = scope_->add_metrics();
      m->set_name(name);
      m->set_description(f.help.empty() ? f.name : f.help);
      m->set_unit(otlp_unit(f));
      if (f.role == FieldRole::Counter) {
        m->mutable_sum()->set_aggregation_temporality(pb_metrics::AGGREGATION_TEMPORALITY_CUMULATIVE);
        m->mutable_sum()->set_is_monotonic(true);
      } else {
        m->mutable_gauge();
      }
      by_name_[name] = m;
    } else {
      m = it->second;
    }
    auto* dp = m->has_sum() ? m->mutable_sum()->add_data_points() : m->mutable_gauge()->add_data_points();
    fill_attrs(dp->mutable_attributes());
    dp->set_time_unix_nano(t);
    if (v.is_int())
      dp->set_as_int(v.as_int());
    else if (v.is_bool())
      dp->set_as_int(v.as_bool() ? 1 : 0);
    else
      dp->set_as_double(v.as_double());
    bytes_ += dp->ByteSizeLong() + 8;
    ++added;
  };
  for (size_t i = 0; i < s.fields.size(); ++i) {
    const Value& v = r.values[i];
    if (!(v.is_number() || v.is_bool())) continue;
    const FieldSpec& f = s.fields[i];
    bool measured = declared ? s.is_measurement(i) : (s.data_type == DataType::Metric && f.role != FieldRole::Identity);
    if (measured) add_point(f, v);
  }
  for_each_member_field(s, r.values, [&](const FieldSpec&, const FieldSpec& m, const Value& v) {
    if ((m.role == FieldRole::Gauge || m.role == FieldRole::Counter) && (v.is_number() || v.is_bool())) add_point(m, v);
  });
  points_ += added;
  return added;
}

void MetricsBuilder::clear() {
  by_name_.clear();
  scope_ = start_request(
      arena_, req_, resource_, [](auto* req) { return req->add_resource_metrics(); },
      [](auto* rm) { return rm->add_scope_metrics(); });
  points_ = 0;
  bytes_ = 0;
}

std::string to_json(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions opts;
  opts.always_print_enums_as_ints = true;
  opts.preserve_proto_field_names = false;
  auto status = google::protobuf::util::MessageToJsonString(m, &out, opts);
  if (!status.ok()) throw std::runtime_error("OTLP JSON encoding failed: " + status.ToString());
  return out;
}

}  // namespace gcm::otlp
