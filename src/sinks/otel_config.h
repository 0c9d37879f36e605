// The otel sink's exporter options (endpoint, protocol, timeout, compression, headers, TLS files, each with its
// OTEL_EXPORTER_OTLP_* fallback) turned into an exporter configuration, and its resource attributes. A function of
// its own so that `gcm agent` configures its OTLP push exactly as `--sink otel` does.
#pragma once

#include "core/retry.h"
#include "core/value.h"
#include "otlp/exporter.h"
#include "sinks/sink.h"

namespace gcm {

// Validates the options before any I/O (URL schemes, readable TLS files, the gRPC module when protocol=grpc);
// throws SinkUsageError naming the option.
otlp::ExporterConfig otel_exporter_config(const SinkOptions& o, const RetryPolicy& retry);

// The given attributes plus service.name=gcm, host.name and $OTEL_RESOURCE_ATTRIBUTES, none overriding a given key.
Object otel_resource(Object attrs);

}  // namespace gcm
