#include "processor/grpc_receiver.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace gcm::processor {

const char* grpc_code_name(GrpcCode code) {
  switch (code) {
    case GrpcCode::Ok: return "OK";
    case GrpcCode::Cancelled: return "CANCELLED";
    case GrpcCode::InvalidArgument: return "INVALID_ARGUMENT";
    case GrpcCode::ResourceExhausted: return "RESOURCE_EXHAUSTED";
    case GrpcCode::Unimplemented: return "UNIMPLEMENTED";
    case GrpcCode::Internal: return "INTERNAL";
    case GrpcCode::Unavailable: return "UNAVAILABLE";
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
  int threads = opts_.threads > 0 ? opts_.threads : std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 2, 16);
  gcm_otlp_grpc_server_options o{};
  o.address = address.c_str();
  o.max_message_bytes = opts_.max_message;
  o.max_queued_bytes = opts_.max_queued_bytes;
  o.threads = threads;
  o.handler = &GrpcReceiver::on_call;
  o.user = this;
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
                           const char* const* /*metadata: OTLP needs none*/, void* call,
                           gcm_otlp_grpc_respond_fn respond) {
  auto* self = static_cast<GrpcReceiver*>(user);
  GrpcReply r;
  try {
    r = self->handler_(method, std::string_view(body, body_len), encoding);
  } catch (const std::exception& e) {
    r = {GrpcCode::Internal, fmt::format("slurm_processor: {}", e.what()), ""};
  }
  respond(call, static_cast<int>(r.code), r.message.c_str(), r.body.data(), r.body.size());
}

}  // namespace gcm::processor
