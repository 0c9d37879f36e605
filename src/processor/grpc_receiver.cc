#include "processor/grpc_receiver.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace gcm::processor {

const char* grpc_code_name(GrpcCode code) {
  switch (code) {
    case GrpcCode::Ok:
      return "OK";
    case GrpcCode::Cancelled:
      return "CANCELLED";
    case GrpcCode::InvalidArgument:
      return "INVALID_ARGUMENT";
    case GrpcCode::ResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case GrpcCode::Unimplemented:
      return "UNIMPLEMENTED";
    case GrpcCode::Internal:
      return "INTERNAL";
    case GrpcCode::Unavailable:
      return "UNAVAILABLE";
    case GrpcCode::Unauthenticated:
      return "UNAUTHENTICATED";
  }
  return "UNKNOWN";
}

GrpcReceiver::GrpcReceiver(GrpcReceiverOptions opts, Handler handler)
    : opts_(std::move(opts)), handler_(std::move(handler)), api_(otlp::load_grpc_server()) {}

GrpcReceiver::~GrpcReceiver() { stop(); }

void GrpcReceiver::start() {
  if (server_) return;
  // gRPC spells IPv6 addresses in brackets.
  std::string address = opts_.host.find(':') != std::string::npos ? fmt::format("[{}]:{}", opts_.host, opts_.port)
                                                                  : fmt::format("{}:{}", opts_.host, opts_.port);
  int threads =
      opts_.threads > 0 ? opts_.threads : std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 2, 16);
  gcm_otlp_grpc_server_options o{};
  o.address = address.c_str();
  o.max_message_bytes = opts_.max_message;
  o.max_queued_bytes = opts_.max_queued_bytes;
  o.threads = threads;
  o.handler = &GrpcReceiver::on_call;
  o.user = this;
  if (opts_.tls) {
    o.tls_cert_pem = opts_.tls->cert_pem.c_str();
    o.tls_key_pem = opts_.tls->key_pem.c_str();
    o.tls_client_ca_pem = opts_.tls->client_ca_pem.empty() ? nullptr : opts_.tls->client_ca_pem.c_str();
    o.tls_client_auth = static_cast<int>(opts_.tls->client_auth);
  }
  char why[512] = "";
  server_ = api_.start(&o, &port_, why, sizeof why);
  if (!server_) throw std::runtime_error(why);
}

void GrpcReceiver::stop() {
  if (!server_) return;
  api_.stop(server_, static_cast<long>(opts_.shutdown_deadline.count()));
  server_ = nullptr;
}

void GrpcReceiver::on_call(void* user, const char* method, const char* body, size_t body_len, const char* encoding,
                           const char* const* metadata, void* call, gcm_otlp_grpc_respond_fn respond) {
  auto* self = static_cast<GrpcReceiver*>(user);
  GrpcReply r;
  try {
    if (self->opts_.auth) {
      // On a worker thread of the module: bcrypt may take its time here. gRPC sends metadata names in lower case.
      std::string_view authorization;
      for (const char* const* m = metadata; m && *m; ++m)
        if (std::string_view line(*m); line.starts_with("authorization: ")) authorization = line.substr(15);
      if (!self->opts_.auth->verify(authorization)) {
        r = {GrpcCode::Unauthenticated, "slurm_processor: missing or wrong credentials (authorization metadata)", ""};
        if (self->on_unauthenticated_) self->on_unauthenticated_();
        respond(call, static_cast<int>(r.code), r.message.c_str(), nullptr, 0);
        return;
      }
    }
    r = self->handler_(method, std::string_view(body, body_len), encoding);
  } catch (const std::exception& e) {
    r = {GrpcCode::Internal, fmt::format("slurm_processor: {}", e.what()), ""};
  }
  respond(call, static_cast<int>(r.code), r.message.c_str(), r.body.data(), r.body.size());
}

}  // namespace gcm::processor
