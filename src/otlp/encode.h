// Records -> OTLP export requests. LOG records become log records whose attributes are the flattened record (plus
// `time`), as the reference; METRIC records become gauges (or monotonic sums for counters) named from the schema,
// one data point per measurement, with the record's identity fields as data-point attributes (the reference sends
// no attributes, so per-GPU or per-account series overwrite each other; ours do not).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <memory>

#include <google/protobuf/arena.h>

#include "core/record.h"
#include "logs_service.pb.h"
#include "metrics_service.pb.h"

namespace gcm::otlp {

namespace pb_common = opentelemetry::proto::common::v1;

void to_any_value(const Value& v, pb_common::AnyValue* out);
void add_attribute(google::protobuf::RepeatedPtrField<pb_common::KeyValue>* attrs, const std::string& key,
                   const Value& v);

class LogsBuilder {
 public:
  // resource attributes in the given order; scope "gcm" with the project's version.
  explicit LogsBuilder(const Object& resource_attributes);
  void add(const Record& r, int64_t ts_seconds, uint64_t observed_unix_nano);
  size_t records() const { return records_; }
  size_t approx_bytes() const { return bytes_; }
  const opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest& request() const { return *req_; }
  void clear();

 private:
  // Requests live on an arena: tens of thousands of small messages per request would otherwise be dominated by
  // malloc/free. clear() drops the whole arena at once.
  Object resource_;
  std::unique_ptr<google::protobuf::Arena> arena_;
  opentelemetry::proto::collector::logs::v1::ExportLogsServiceRequest* req_ = nullptr;
  opentelemetry::proto::logs::v1::ScopeLogs* scope_ = nullptr;
  size_t records_ = 0;
  size_t bytes_ = 0;
};

class MetricsBuilder {
 public:
  explicit MetricsBuilder(const Object& resource_attributes);
  // Returns the number of data points added.
  size_t add(const Record& r, int64_t ts_seconds);
  size_t points() const { return points_; }
  size_t approx_bytes() const { return bytes_; }
  const opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest& request() const { return *req_; }
  void clear();

 private:
  Object resource_;
  std::unique_ptr<google::protobuf::Arena> arena_;
  opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest* req_ = nullptr;
  opentelemetry::proto::metrics::v1::ScopeMetrics* scope_ = nullptr;
  std::map<std::string, opentelemetry::proto::metrics::v1::Metric*> by_name_;
  size_t points_ = 0;
  size_t bytes_ = 0;
};

// OTLP/JSON encoding of a request (lowerCamelCase keys, enums as integers).
std::string to_json(const google::protobuf::Message& m);

}  // namespace gcm::otlp
