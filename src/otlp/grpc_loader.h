// Finds and loads the OTLP/gRPC transport module (see otlp/grpc/grpc_transport.h and otlp/grpc/grpc_server.h).
#pragma once

#include <string>

#include "otlp/grpc/grpc_server.h"
#include "otlp/grpc/grpc_transport.h"

namespace gcm::otlp {

// The client. Looks in $GCM_OTLP_GRPC_MODULE, then beside the executable, then in <exe dir>/../lib/gcm/. Throws
// std::runtime_error listing the places tried when the module cannot be loaded.
gcm_otlp_grpc_call_fn load_grpc_transport();
// The client's TLS settings (a private CA, a client certificate), from the same module.
gcm_otlp_grpc_set_tls_fn load_grpc_set_tls();

struct GrpcServerApi {
  gcm_otlp_grpc_server_start_fn start = nullptr;
  gcm_otlp_grpc_server_stop_fn stop = nullptr;
};

// The server, from the same module (found the same way); throws std::runtime_error when the module cannot be
// loaded or is one without a server.
GrpcServerApi load_grpc_server();

}  // namespace gcm::otlp
