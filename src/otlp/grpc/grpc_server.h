// The C interface of the gRPC server in the OTLP/gRPC transport module (libgcm_otlp_grpc.so), for receivers such as
// slurm_processor's.
//
// Like the client (grpc_transport.h) it passes serialized bytes only: the server is a generic gRPC service that
// hands every unary call's method name and request bytes to one handler, which decides what the method means
// (unknown methods: it answers UNIMPLEMENTED). Messages over `max_message_bytes` as received are refused with
// RESOURCE_EXHAUSTED by gRPC itself, before the handler sees them.
//
// Compressed messages (gzip, deflate) reach the handler compressed, with their encoding: the handler inflates them
// with a bound of its own. gRPC 1.51 would inflate a message whole before checking its size against the limit, so
// a request of a few hundred KiB of gzip could take gigabytes of memory.
//
// Handlers run on a pool of `threads` worker threads of the module, never on gRPC's own threads: a handler may take
// its time (a first job lookup asks scontrol) without stalling the server's I/O. Calls waiting for a worker hold
// their request bytes; past `max_queued_bytes` of them new calls are answered UNAVAILABLE (retryable) at once.
#pragma once

#include <stddef.h>

extern "C" {

// Answers the call; a handler calls it exactly once before returning (a call left unanswered gets INTERNAL).
// `code` is the gRPC status code; with 0 (OK) `body` is the response message, else `message` the status message.
// The bytes are copied.
typedef void (*gcm_otlp_grpc_respond_fn)(void* call, int code, const char* message, const char* body, size_t body_len);

// One call: `method` ("/package.Service/Method"), the request message as received, its `encoding` ("" when not
// compressed, else "gzip" or "deflate", the zlib format), the client's metadata as a NULL-terminated array of
// "name: value" strings (binary "-bin" entries left out). Runs on a worker thread; several at once.
typedef void (*gcm_otlp_grpc_handler_fn)(void* user, const char* method, const char* body, size_t body_len,
                                         const char* encoding, const char* const* metadata, void* call,
                                         gcm_otlp_grpc_respond_fn respond);

struct gcm_otlp_grpc_server_options {
  const char* address;       // "host:port", "[v6]:port"; port 0: any free port
  size_t max_message_bytes;  // largest request message as received (compressed, when it is)
  size_t max_queued_bytes;   // request bytes waiting for a worker before new calls are answered UNAVAILABLE
  int threads;               // worker threads running the handler
  gcm_otlp_grpc_handler_fn handler;
  void* user;  // passed to the handler; must outlive gcm_otlp_grpc_server_stop
  // TLS: the server's certificate chain and key (PEM; NULL: plaintext), the CA of client certificates (PEM; NULL:
  // none) and the client certificate policy: 0 none asked for, 1 asked for, 2 required (neither verified), 3
  // verified when given, 4 required and verified (the order of exporter-toolkit's client_auth_type values).
  const char* tls_cert_pem;
  const char* tls_key_pem;
  const char* tls_client_ca_pem;
  int tls_client_auth;
};

typedef struct gcm_otlp_grpc_server gcm_otlp_grpc_server;

// Binds and starts serving. Returns NULL when it cannot (the reason in `message`, NUL-terminated, truncated to
// `message_cap`); else the server, with the bound port in `*port`. The port is not shared (no SO_REUSEPORT):
// another process listening there is an error, as for any other listener.
typedef gcm_otlp_grpc_server* (*gcm_otlp_grpc_server_start_fn)(const gcm_otlp_grpc_server_options* options, int* port,
                                                               char* message, size_t message_cap);
// Stops accepting calls, lets calls in progress finish for up to `deadline_ms` (then cancels them), waits for the
// handlers running and frees the server.
typedef void (*gcm_otlp_grpc_server_stop_fn)(gcm_otlp_grpc_server* server, long deadline_ms);

gcm_otlp_grpc_server* gcm_otlp_grpc_server_start(const gcm_otlp_grpc_server_options* options, int* port, char* message,
                                                 size_t message_cap);
void gcm_otlp_grpc_server_stop(gcm_otlp_grpc_server* server, long deadline_ms);
}
