// OTLP/gRPC transport module: one unary call per request through grpc::GenericStub, channels cached per target.
#include "otlp/grpc/grpc_transport.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>

namespace {

std::mutex mu;
std::map<std::string, grpc::SslCredentialsOptions> tls_of_target;  // gcm_otlp_grpc_set_tls

std::shared_ptr<grpc::Channel> channel_for(const std::string& target, bool tls) {
  static std::map<std::pair<std::string, bool>, std::shared_ptr<grpc::Channel>> channels;
  std::lock_guard lock(mu);
  auto& ch = channels[{target, tls}];
  if (!ch) {
    grpc::SslCredentialsOptions ssl;
    if (auto it = tls_of_target.find(target); it != tls_of_target.end()) ssl = it->second;
    auto creds = tls ? grpc::SslCredentials(ssl) : grpc::InsecureChannelCredentials();
    ch = grpc::CreateChannel(target, creds);
  }
  return ch;
}

void copy_message(const std::string& text, char* out, size_t cap) {
  if (!out || cap == 0) return;
  size_t n = std::min(text.size(), cap - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

}  // namespace

extern "C" void gcm_otlp_grpc_set_tls(const char* target, const char* ca_pem, const char* cert_pem,
                                      const char* key_pem) {
  grpc::SslCredentialsOptions ssl;
  if (ca_pem) ssl.pem_root_certs = ca_pem;
  if (cert_pem) ssl.pem_cert_chain = cert_pem;
  if (key_pem) ssl.pem_private_key = key_pem;
  std::lock_guard lock(mu);
  tls_of_target[target] = ssl;
}

extern "C" int gcm_otlp_grpc_call(const char* target, int tls, const char* method, const char* body, size_t body_len,
                                  long timeout_ms, const char* const* headers, int gzip, char* response,
                                  size_t response_cap, size_t* response_len, char* message, size_t message_cap) {
  try {
    grpc::GenericStub stub(channel_for(target, tls != 0));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(timeout_ms));
    if (gzip) ctx.set_compression_algorithm(GRPC_COMPRESS_GZIP);
    for (const char* const* h = headers; h && *h; ++h) {
      std::string line(*h);
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key = line.substr(0, colon);
      std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
      size_t v = line.find_first_not_of(' ', colon + 1);
      ctx.AddMetadata(key, v == std::string::npos ? "" : line.substr(v));
    }
    grpc::Slice slice(body, body_len);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer reply;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    grpc::Status status;
    stub.UnaryCall(&ctx, method, grpc::StubOptions(), &request, &reply, [&](grpc::Status s) {
      std::lock_guard lock(mu);
      status = std::move(s);
      done = true;
      cv.notify_all();
    });
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return done; });  // bounded by the call's deadline
    }
    if (response_len) *response_len = 0;
    if (status.ok()) {
      std::vector<grpc::Slice> slices;
      if (reply.Dump(&slices).ok()) {
        size_t off = 0;
        for (const auto& s : slices) {
          size_t n = std::min(s.size(), response_cap > off ? response_cap - off : 0);
          if (response && n) std::memcpy(response + off, s.begin(), n);
          off += s.size();
        }
        if (response_len) *response_len = off;
      }
    }
    copy_message(status.error_message(), message, message_cap);
    return static_cast<int>(status.error_code());
  } catch (const std::exception& e) {
    copy_message(std::string("gRPC transport failure: ") + e.what(), message, message_cap);
    return static_cast<int>(grpc::StatusCode::INTERNAL);
  }
}
