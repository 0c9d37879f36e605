// The C interface of the OTLP/gRPC transport module (libgcm_otlp_grpc.so).
//
// gRPC lives in a module loaded with dlopen only when -o protocol=grpc is used: libgrpc++ and its dependencies
// would otherwise be loaded at the start of every gcm and health_checks process. The interface passes serialized
// request and response bytes, so the module needs no generated protobuf code of its own (two copies of the OTLP
// descriptors in one process would clash).
#pragma once

#include <stddef.h>

extern "C" {

// Sends one unary call `method` (e.g. "/opentelemetry.proto.collector.logs.v1.LogsService/Export") to `target`
// ("host:port"; `tls` non-zero for a TLS channel). `headers` is a NULL-terminated array of "name: value" strings
// sent as metadata; `gzip` non-zero compresses the request. Returns the gRPC status code (0 = OK). The response
// body is copied into `response` (at most `response_cap` bytes, the full length in `*response_len`), the status
// message into `message` (NUL-terminated, truncated to `message_cap`).
typedef int (*gcm_otlp_grpc_call_fn)(const char* target, int tls, const char* method, const char* body, size_t body_len,
                                     long timeout_ms, const char* const* headers, int gzip, char* response,
                                     size_t response_cap, size_t* response_len, char* message, size_t message_cap);

// The TLS material of the channels to `target` made from now on: the CA to verify the server with (PEM; NULL or ""
// for gRPC's default roots) and a client certificate and key for mutual TLS (PEM; NULL for none). Copied.
typedef void (*gcm_otlp_grpc_set_tls_fn)(const char* target, const char* ca_pem, const char* cert_pem,
                                         const char* key_pem);
void gcm_otlp_grpc_set_tls(const char* target, const char* ca_pem, const char* cert_pem, const char* key_pem);

int gcm_otlp_grpc_call(const char* target, int tls, const char* method, const char* body, size_t body_len,
                       long timeout_ms, const char* const* headers, int gzip, char* response, size_t response_cap,
                       size_t* response_len, char* message, size_t message_cap);
}
