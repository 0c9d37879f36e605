// Finds and loads the OTLP/gRPC transport module (see otlp/grpc/grpc_transport.h).
#pragma once

#include <string>

#include "otlp/grpc/grpc_transport.h"

namespace gcm::otlp {

// Looks in $GCM_OTLP_GRPC_MODULE, then beside the executable, then in <exe dir>/../lib/gcm/. Throws
// std::runtime_error listing the places tried when the module cannot be loaded.
gcm_otlp_grpc_call_fn load_grpc_transport();

}  // namespace gcm::otlp
