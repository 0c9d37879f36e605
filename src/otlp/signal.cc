#include "otlp/signal.h"

namespace gcm::otlp {

const char* signal_name(Signal s) { return s == Signal::Metrics ? "metrics" : s == Signal::Logs ? "logs" : "traces"; }

const char* signal_path(Signal s) {
  return s == Signal::Metrics ? "v1/metrics" : s == Signal::Logs ? "v1/logs" : "v1/traces";
}

const char* item_name(Signal s) {
  return s == Signal::Metrics ? "data points" : s == Signal::Logs ? "log records" : "spans";
}

const char* grpc_method(Signal s) {
  switch (s) {
    case Signal::Metrics:
      return "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export";
    case Signal::Logs:
      return "/opentelemetry.proto.collector.logs.v1.LogsService/Export";
    case Signal::Traces:
      break;
  }
  return "/opentelemetry.proto.collector.trace.v1.TraceService/Export";
}

}  // namespace gcm::otlp
