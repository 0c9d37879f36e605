// The module's gRPC server: a callback generic service whose reactor reads the one request message of a unary call
// and hands it to the worker pool, which runs the handler and answers (see grpc_server.h).
#include "otlp/grpc/grpc_server.h"

#include <grpc/slice.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "otlp/grpc/worker_pool.h"

namespace {

void copy_message(const std::string& text, char* out, size_t cap) {
  if (!out || cap == 0) return;
  size_t n = std::min(text.size(), cap - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

class GenericService;

}  // namespace

// gRPC's own name for access to a ByteBuffer's C buffer (declared a friend of ByteBuffer, defined only in gRPC's
// tests): the compression of a message that gRPC did not inflate is only there.
namespace grpc::internal {
class GrpcByteBufferPeer {
 public:
  explicit GrpcByteBufferPeer(ByteBuffer* bb) : bb_(bb) {}
  grpc_byte_buffer* c_buffer() { return bb_->c_buffer(); }

 private:
  ByteBuffer* bb_;
};
}  // namespace grpc::internal

namespace {

// The message bytes as received and their encoding ("", "gzip", "deflate").
bool raw_message(grpc::ByteBuffer& bb, std::string& bytes, const char*& encoding) {
  grpc_byte_buffer* c = grpc::internal::GrpcByteBufferPeer(&bb).c_buffer();
  if (!c || c->type != GRPC_BB_RAW) return false;
  switch (c->data.raw.compression) {
    case GRPC_COMPRESS_NONE:
      encoding = "";
      break;
    case GRPC_COMPRESS_DEFLATE:
      encoding = "deflate";
      break;
    case GRPC_COMPRESS_GZIP:
      encoding = "gzip";
      break;
    default:
      return false;
  }
  const grpc_slice_buffer& sb = c->data.raw.slice_buffer;
  bytes.clear();
  bytes.reserve(sb.length);
  for (size_t i = 0; i < sb.count; ++i)
    bytes.append(reinterpret_cast<const char*>(GRPC_SLICE_START_PTR(sb.slices[i])), GRPC_SLICE_LENGTH(sb.slices[i]));
  return true;
}

}  // namespace

struct gcm_otlp_grpc_server {
  gcm_otlp_grpc_server_options opts;
  gcm::otlp::grpc_module::WorkerPool pool;
  std::unique_ptr<GenericService> service;
  std::unique_ptr<grpc::Server> server;
  gcm_otlp_grpc_server(const gcm_otlp_grpc_server_options& o) : opts(o), pool(o.threads, o.max_queued_bytes) {}
};

namespace {

// One call: read the request message, queue it for a worker, answer from the worker. Deletes itself when gRPC is
// done with it (OnDone).
class UnaryCall final : public grpc::ServerGenericBidiReactor {
 public:
  UnaryCall(gcm_otlp_grpc_server& server, grpc::GenericCallbackServerContext* ctx) : server_(server), ctx_(ctx) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    // Not ok: the client closed without sending a message, or the call already failed (a message over the size
    // limit: gRPC has set RESOURCE_EXHAUSTED, and the status given here is ignored).
    if (!ok) return Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the call carried no request message"));
    size_t bytes = request_.Length();
    if (!server_.pool.submit(bytes, [this] { run(); }))
      Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is busy: too many requests waiting"));
  }

  void OnDone() override { delete this; }

 private:
  static void respond(void* call, int code, const char* message, const char* body, size_t body_len) {
    auto* self = static_cast<UnaryCall*>(call);
    if (self->answered_) return;
    self->answered_ = true;
    self->status_ = grpc::Status(static_cast<grpc::StatusCode>(code), message ? message : "");
    if (code == 0) {
      grpc::Slice slice(body, body_len);
      self->response_ = grpc::ByteBuffer(&slice, 1);
    }
  }

  // On a worker thread.
  void run() {
    // A client that gave up while the call waited (deadline, cancel) would retry it: processing it too would
    // duplicate the data.
    if (ctx_->IsCancelled()) return Finish(grpc::Status(grpc::StatusCode::CANCELLED, "cancelled while queued"));
    std::string body;
    const char* encoding = "";
    if (!raw_message(request_, body, encoding))
      return Finish(grpc::Status(grpc::StatusCode::INTERNAL, "the request message could not be read"));
    std::vector<std::string> lines;
    for (const auto& [key, value] : ctx_->client_metadata()) {
      std::string_view k(key.data(), key.size());
      if (k.ends_with("-bin")) continue;
      lines.push_back(std::string(k) + ": " + std::string(value.data(), value.size()));
    }
    std::vector<const char*> metadata;
    for (const auto& l : lines) metadata.push_back(l.c_str());
    metadata.push_back(nullptr);
    try {
      server_.opts.handler(server_.opts.user, ctx_->method().c_str(), body.data(), body.size(), encoding,
                           metadata.data(), this, &UnaryCall::respond);
    } catch (...) {
      // A C handler does not throw; this only keeps a C++ one that does from ending the process.
      if (!answered_) respond(this, static_cast<int>(grpc::StatusCode::INTERNAL), "the handler failed", nullptr, 0);
    }
    request_.Clear();
    if (!answered_) return Finish(grpc::Status(grpc::StatusCode::INTERNAL, "the handler gave no answer"));
    if (status_.ok()) return StartWriteAndFinish(&response_, grpc::WriteOptions(), status_);
    Finish(status_);
  }

  gcm_otlp_grpc_server& server_;
  grpc::GenericCallbackServerContext* ctx_;
  grpc::ByteBuffer request_, response_;
  bool answered_ = false;
  grpc::Status status_;
};

class GenericService final : public grpc::CallbackGenericService {
 public:
  explicit GenericService(gcm_otlp_grpc_server& server) : server_(server) {}
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    return new UnaryCall(server_, ctx);
  }

 private:
  gcm_otlp_grpc_server& server_;
};

}  // namespace

extern "C" gcm_otlp_grpc_server* gcm_otlp_grpc_server_start(const gcm_otlp_grpc_server_options* options, int* port,
                                                            char* message, size_t message_cap) {
  try {
    auto s = std::make_unique<gcm_otlp_grpc_server>(*options);
    s->service = std::make_unique<GenericService>(*s);
    grpc::ServerBuilder builder;
    int bound = 0;
    std::shared_ptr<grpc::ServerCredentials> creds = grpc::InsecureServerCredentials();
    if (options->tls_cert_pem) {
      static const grpc_ssl_client_certificate_request_type kRequest[] = {
          GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE,
          GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_BUT_DONT_VERIFY,
          GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_BUT_DONT_VERIFY,
          GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY,
          GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY,
      };
      int policy = std::clamp(options->tls_client_auth, 0, 4);
      grpc::SslServerCredentialsOptions ssl(kRequest[policy]);
      if (options->tls_client_ca_pem) ssl.pem_root_certs = options->tls_client_ca_pem;
      ssl.pem_key_cert_pairs.push_back({options->tls_key_pem ? options->tls_key_pem : "", options->tls_cert_pem});
      creds = grpc::SslServerCredentials(ssl);
    }
    builder.AddListeningPort(options->address, creds, &bound);
    // gRPC sets SO_REUSEPORT by default: a second server on the same port would then share it silently.
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<size_t>(options->max_message_bytes, INT_MAX)));
    // The handler inflates, with a bound (see grpc_server.h).
    builder.AddChannelArgument(GRPC_ARG_ENABLE_PER_MESSAGE_DECOMPRESSION, 0);
    builder.RegisterCallbackGenericService(s->service.get());
    s->server = builder.BuildAndStart();
    if (!s->server || bound == 0) {
      if (s->server) s->server->Shutdown();
      s->pool.stop();
      copy_message(std::string("cannot listen for gRPC on ") + options->address +
                       " (address in use, not a local address, or not HOST:PORT)",
                   message, message_cap);
      return nullptr;
    }
    if (port) *port = bound;
    return s.release();
  } catch (const std::exception& e) {
    copy_message(std::string("gRPC server failure: ") + e.what(), message, message_cap);
    return nullptr;
  }
}

extern "C" void gcm_otlp_grpc_server_stop(gcm_otlp_grpc_server* server, long deadline_ms) {
  if (!server) return;
  // Shutdown returns once every call is done; calls still waiting for a worker need the workers running meanwhile.
  server->server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(deadline_ms));
  server->server->Wait();
  server->pool.stop();
  delete server;
}
