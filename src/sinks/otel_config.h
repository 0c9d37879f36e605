// The otel sink's exporter options (endpoint, protocol, timeout, compression, headers, TLS files, each with its
// OTEL_EXPORTER_OTLP_* fallback) turned into a transport configuration, and its resource attributes. A function of
// its own so that `gcm agent` configures its OTLP push exactly as `--sink otel` does.
#pragma once

#include "core/value.h"
#include "otlp/transport.h"
#include "sinks/sink.h"

namespace gcm {

// Validates the options before any I/O (URL schemes, readable TLS files, the gRPC module when protocol=grpc);
// throws SinkUsageError naming the option.
otlp::TransportConfig otel_transport_config(const SinkOptions& o);

// The given attributes plus service.name=gcm, host.name and $OTEL_RESOURCE_ATTRIBUTES, none overriding a given key.
Object otel_resource(Object attrs);

}  // namespace gcm
