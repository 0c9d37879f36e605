// otel: OTLP over HTTP (protobuf by default, JSON with -o protocol=http/json), gzip on request. LOG records become
// log records, METRIC records gauges/sums with the records' identity fields as attributes. Requests are sent at the
// end of each chunk and split before they pass max_request_bytes (20 MiB).
#include <chrono>
#include <memory>

#include "otlp/encode.h"
#include "core/clock.h"
#include "otlp/delivery.h"
#include "sinks/otel_config.h"
#include "sinks/sink.h"

namespace gcm {
namespace {

class OtelSink : public Sink {
 public:
  OtelSink(const SinkOptions& o, const SinkContext& ctx) : log_(ctx.log), retry_(ctx.retry) {
    otlp::DeliveryOptions d;
    d.name = "sink 'otel'";
    d.transport = std::make_shared<otlp::TransportConfig>(otel_transport_config(o));
    max_request_bytes_ = static_cast<size_t>(o.get_int("max_request_bytes", 20 << 20));

    logs_ = std::make_unique<otlp::LogsBuilder>(otel_resource(o.get_dict("log_resource_attributes")));
    metrics_ = std::make_unique<otlp::MetricsBuilder>(otel_resource(o.get_dict("metric_resource_attributes")));
    try {
      delivery_ = std::make_unique<otlp::Delivery>(std::move(d), log_);
    } catch (const otlp::TransportError& e) {  // a TLS file that cannot be read, no gRPC module
      throw SinkError(e.what());
    }
  }

  void begin_chunk(const BatchInfo& info) override {
    info_ = info;
    observed_ = unix_ns_now();
  }

  void write(const Record& r) override {
    if (info_.data_type == DataType::Log) {
      logs_->add(r, info_.ts, observed_);
      if (logs_->approx_bytes() >= max_request_bytes_) send_logs();
    } else {
      metrics_->add(r, info_.ts);
      if (metrics_->approx_bytes() >= max_request_bytes_) send_metrics();
    }
  }

  void end_chunk() override {
    send_logs();
    send_metrics();
  }

  void flush() override { end_chunk(); }

 private:
  void send_logs() {
    if (logs_->records() == 0) return;
    // The builder is cleared even when sending fails: a failed request is reported by the loop, never resent
    // with the next chunk's data (which would duplicate or reorder it).
    struct Clear {
      otlp::LogsBuilder* b;
      ~Clear() { b->clear(); }
    } clear{logs_.get()};
    send(otlp::Signal::Logs, logs_->request(), logs_->records());
  }
  void send_metrics() {
    if (metrics_->points() == 0) {
      metrics_->clear();
      return;
    }
    struct Clear {
      otlp::MetricsBuilder* b;
      ~Clear() { b->clear(); }
    } clear{metrics_.get()};
    send(otlp::Signal::Metrics, metrics_->request(), metrics_->points());
  }
  // Sent now, retried by the command's --retries; a failure is the sinks' own: the loop reports (and counts) a
  // SinkError whatever the sink.
  void send(otlp::Signal signal, const google::protobuf::Message& request, uint64_t items) {
    try {
      delivery_->deliver_now(signal, request.SerializeAsString(), items, retry_);
    } catch (const otlp::ExportError& e) {
      throw SinkError(e.what());
    }
  }

  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<otlp::LogsBuilder> logs_;
  std::unique_ptr<otlp::MetricsBuilder> metrics_;
  RetryPolicy retry_;
  std::unique_ptr<otlp::Delivery> delivery_;
  BatchInfo info_;
  uint64_t observed_ = 0;
  size_t max_request_bytes_ = 20 << 20;
};

const bool kOtelSinkRegistered = register_sink({
    "otel",
    "OTLP over HTTP (protobuf or JSON) or gRPC: LOG records as log records, METRIC records as gauges/sums with "
    "attributes.",
    {
        {"otel_endpoint", "str", "base URL; /v1/logs and /v1/metrics are appended", "$OTEL_EXPORTER_OTLP_ENDPOINT"},
        {"otel_timeout", "int", "seconds per request", "$OTEL_EXPORTER_OTLP_TIMEOUT or 10"},
        {"protocol", "str", "http/protobuf, http/json or grpc (endpoint http://HOST:4317)",
         "$OTEL_EXPORTER_OTLP_PROTOCOL or http/protobuf"},
        {"compression", "str", "gzip or none", "$OTEL_EXPORTER_OTLP_COMPRESSION or none"},
        {"headers", "dict", "extra request headers, added to $OTEL_EXPORTER_OTLP_HEADERS", ""},
        {"log_resource_attributes", "dict", "resource attributes of logs (service.name=gcm and host.name added)", ""},
        {"metric_resource_attributes", "dict", "resource attributes of metrics (service.name=gcm, host.name added)",
         ""},
        {"max_request_bytes", "int", "split requests before they pass this size", "20971520"},
        {"otel_ca_file", "path",
         "PEM CA certificate(s) that verify an https:// endpoint (a private CA), for HTTP and gRPC",
         "$OTEL_EXPORTER_OTLP_CERTIFICATE or the system's CAs"},
        {"otel_client_cert_file", "path", "PEM client certificate for mutual TLS (with otel_client_key_file)",
         "$OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"},
        {"otel_client_key_file", "path", "PEM key of otel_client_cert_file", "$OTEL_EXPORTER_OTLP_CLIENT_KEY"},
    },
    [](const SinkOptions& o, const SinkContext& ctx) { return std::make_unique<OtelSink>(o, ctx); },
});

}  // namespace
}  // namespace gcm
