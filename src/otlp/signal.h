// The three OTLP signals, and what every piece that carries them (the receivers, the delivery, the spool) calls them.
#pragma once

#include <cstdint>

namespace gcm::otlp {

enum class Signal : uint8_t { Metrics, Logs, Traces };
inline constexpr int kSignalCount = 3;

const char* signal_name(Signal s);  // "metrics", "logs", "traces"
const char* signal_path(Signal s);  // "v1/metrics", "v1/logs", "v1/traces": OTLP/HTTP's path after the endpoint
const char* item_name(Signal s);    // "data points", "log records", "spans"
// The gRPC method that exports it: "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export", ...
const char* grpc_method(Signal s);

}  // namespace gcm::otlp
