// slurm_processor's OTLP/gRPC receiver: the gRPC server of the transport module (otlp/grpc/grpc_server.h), loaded
// with dlopen only when the receiver is on, with a C++ handler. The module does gRPC (HTTP/2, the message size
// limit as received, deadlines); the handler gets each call's method, request bytes and their encoding ("" or
// "gzip"/"deflate": it inflates them itself, with a bound) and returns the status and the response bytes.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/http_auth.h"
#include "core/web_config.h"
#include "otlp/grpc_loader.h"

namespace gcm::processor {

// The gRPC status codes the receiver answers with (grpc/status.h, without including gRPC here).
enum class GrpcCode : int {
  Ok = 0,
  Cancelled = 1,
  InvalidArgument = 3,
  ResourceExhausted = 8,
  Unimplemented = 12,
  Internal = 13,
  Unavailable = 14,
  Unauthenticated = 16,
};
const char* grpc_code_name(GrpcCode code);  // "OK", "INVALID_ARGUMENT", ...

struct GrpcReply {
  GrpcCode code = GrpcCode::Ok;
  std::string message;  // the status message when not OK
  std::string body;     // the response message when OK
};

struct GrpcReceiverOptions {
  std::string host = "127.0.0.1";
  int port = 4317;  // 0: any free port
  size_t max_message = 16u << 20;
  int threads = 0;  // handler threads; 0: one per core, at least 2 and at most 16
  size_t max_queued_bytes = 256u << 20;
  std::chrono::milliseconds shutdown_deadline{5000};
  std::optional<TlsServerConfig> tls;  // from the web config: certificate, key, client CA and policy
  std::shared_ptr<HttpAuth> auth;      // checked on each call's `authorization` metadata (UNAUTHENTICATED)
};

class GrpcReceiver {
 public:
  using Handler = std::function<GrpcReply(std::string_view method, std::string_view body, std::string_view encoding)>;
  // Loads the module; throws std::runtime_error when it cannot.
  GrpcReceiver(GrpcReceiverOptions opts, Handler handler);
  ~GrpcReceiver();
  GrpcReceiver(const GrpcReceiver&) = delete;
  GrpcReceiver& operator=(const GrpcReceiver&) = delete;

  // Binds and serves; throws std::runtime_error naming the address when it cannot.
  void start();
  // Stops accepting calls, lets those in progress finish within the shutdown deadline, waits for the handlers.
  void stop();
  int port() const { return port_; }
  // Called for each call refused for its credentials (the service counts them).
  void on_unauthenticated(std::function<void()> f) { on_unauthenticated_ = std::move(f); }

 private:
  static void on_call(void* user, const char* method, const char* body, size_t body_len, const char* encoding,
                      const char* const* metadata, void* call, gcm_otlp_grpc_respond_fn respond);

  GrpcReceiverOptions opts_;
  Handler handler_;
  std::function<void()> on_unauthenticated_;
  otlp::GrpcServerApi api_;
  gcm_otlp_grpc_server* server_ = nullptr;
  int port_ = 0;
};

}  // namespace gcm::processor
